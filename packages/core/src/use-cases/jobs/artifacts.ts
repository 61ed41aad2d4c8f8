/** Where the sealed artifacts of a request are kept in the DocumentContentStore. */
export const finishedKey = (requestId: string) => `finished:${requestId}`;
export const certificateKey = (requestId: string) => `certificate:${requestId}`;
