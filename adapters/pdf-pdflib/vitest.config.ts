import { esigProject } from '../../vitest.shared';

export default esigProject('pdf-pdflib');
