import { esigProject } from '../../vitest.shared';

export default esigProject('store-sqlite');
