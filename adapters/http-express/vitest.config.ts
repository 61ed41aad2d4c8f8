import { esigProject } from '../../vitest.shared';

export default esigProject('http-express');
