// The core compiles without Node's (or the DOM's) types, so no Buffer or process can creep in. These
// Web APIs, which every runtime the core targets provides (Node ≥ 16, browsers, Deno, Bun, edge), are the
// only globals beyond ES2022 it uses.
declare function atob(data: string): string;
declare function btoa(data: string): string;
