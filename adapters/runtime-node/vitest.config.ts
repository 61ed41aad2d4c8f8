import { esigProject } from '../../vitest.shared';

export default esigProject('runtime-node');
