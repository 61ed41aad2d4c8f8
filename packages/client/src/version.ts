/** This client's version, sent in the `Esig-Client` and `User-Agent` headers (a test keeps it equal to package.json's). */
export const VERSION = '0.1.0';
