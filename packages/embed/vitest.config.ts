import { esigProject } from '../../vitest.shared.ts';

export default esigProject('embed');
