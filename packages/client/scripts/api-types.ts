// Turns the server's OpenAPI document — which the server builds from the io-ts codecs it validates requests
// with — into `src/generated/api-types.ts`: plain TypeScript types the client ships in its `.d.ts`, with
// literal unions for enums and prefixed template-literal types for ids, and the table of operations the
// client calls. Run by scripts/generate-types.ts; a test regenerates it and fails on any difference.
import type { EsigHttpDeps, EsigHttpOptions } from '@esig/http-express';
import { PROBLEMS, buildOpenApi, buildRoutes, buildSignerRoutes } from '@esig/http-express';

type Schema = { readonly [k: string]: any };

/** The document as the server builds it; the route tables need no ports until a request is handled. */
export const serverDocument = (): Schema => {
  const noDeps = {} as EsigHttpDeps;
  return buildOpenApi(buildRoutes(noDeps, {} as EsigHttpOptions), buildSignerRoutes(noDeps, {} as EsigHttpOptions), 'http://localhost:3000');
};

const ID_PATTERN = /^\^([a-z]+)_\[0-9A-Za-z\]\{26\}\$$/;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const indentOf = (depth: number) => '  '.repeat(depth);
/** A literal type, single-quoted as the house style writes strings. */
const lit = (v: unknown) => (typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(v));
const key = (k: string) => (IDENTIFIER.test(k) ? k : lit(k));
const refName = (ref: string) => ref.replace('#/components/schemas/', '');
const comment = (text: string, depth: number) => `${indentOf(depth)}/** ${text.replace(/\*\//g, '*\\/')} */\n`;

/** The TypeScript type of a JSON Schema, for the keywords the server's generator emits. Unknown shapes throw. */
export const typeOf = (s: Schema, depth = 0): string => {
  if (s.$ref) return refName(s.$ref);
  if ('const' in s) return lit(s.const);
  if (s.enum) return s.enum.map(lit).join(' | ');
  if (s.anyOf) return s.anyOf.map((x: Schema) => typeOf(x, depth)).join(' | ');
  if (s.allOf) return s.allOf.map((x: Schema) => wrap(typeOf(x, depth))).join(' & ');
  switch (s.type) {
    case 'string': {
      if (s.format === 'binary') return 'Uint8Array';
      const id = typeof s.pattern === 'string' ? ID_PATTERN.exec(s.pattern) : null;
      return id ? `\`${id[1]}_\${string}\`` : 'string';
    }
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(s.items ?? {}, depth)}>`;
    case 'object': {
      if (s.properties) return objectType(s, depth);
      if (typeof s.additionalProperties === 'object') return `Record<${s.propertyNames ? typeOf(s.propertyNames, depth) : 'string'}, ${typeOf(s.additionalProperties, depth)}>`;
      return 'Record<string, unknown>';
    }
    case undefined:
      if (Object.keys(s).length === 0) return 'unknown';
  }
  throw new Error(`api-types: no TypeScript type for schema ${JSON.stringify(s)}`);
};

/** Parenthesised inside an intersection when it is a union. */
const wrap = (t: string) => (/[|&]/.test(t) && !t.startsWith('{') ? `(${t})` : t);

const objectType = (s: Schema, depth: number): string => {
  const required = new Set<string>(s.required ?? []);
  const members = Object.entries<Schema>(s.properties ?? {}).map(
    ([k, v]) => `${indentOf(depth + 1)}${key(k)}${required.has(k) ? '' : '?'}: ${typeOf(v, depth + 1)};`,
  );
  return members.length === 0 ? 'Record<string, never>' : `{\n${members.join('\n')}\n${indentOf(depth)}}`;
};

interface OperationInfo {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly summary: string;
  readonly params: string;
  readonly query: string;
  readonly body: string;
  readonly response: string;
}

/** The operations an API key may call (the signer API belongs to the signing page, not to this client). */
const operationsOf = (doc: Schema): OperationInfo[] =>
  Object.entries<Schema>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<Schema>(methods)
      .filter(([, op]) => op['x-authentication'] !== 'signing-link')
      .map(([method, op]) => {
        const parameters: Schema[] = op.parameters ?? [];
        const group = (where: string) => {
          const ps = parameters.filter((p) => p.in === where);
          return objectType({ properties: Object.fromEntries(ps.map((p) => [p.name, p.schema])), required: ps.filter((p) => p.required).map((p) => p.name) }, 2);
        };
        const body = op.requestBody?.content as Schema | undefined;
        const ok = Object.entries<Schema>(op.responses).find(([status]) => status.startsWith('2'))![1];
        const content = (ok.content ?? {}) as Schema;
        return {
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          summary: op.summary,
          params: group('path'),
          query: group('query'),
          body: body === undefined ? 'undefined' : body['application/json'] ? typeOf(body['application/json'].schema, 2) : 'Uint8Array',
          // A route with a PDF answer and a JSON alternative (the certificate): the client asks for each by name.
          response: content['application/json'] && Object.keys(content).length === 1 ? typeOf(content['application/json'].schema, 2) : 'Uint8Array',
        };
      }),
  );

const HEADER = `// Generated by packages/client/scripts/generate-types.ts from the esig server's OpenAPI document, which the
// server builds from the io-ts codecs it validates with. Do not edit: run \`npm run generate -w @esig/client\`.
// A test regenerates this file and fails on any difference, so it cannot drift from the server.
`;

/** The whole generated module, as text. */
export const generateApiTypes = (doc: Schema = serverDocument()): string => {
  const out: string[] = [HEADER];
  const codes = Object.keys(PROBLEMS).sort();
  out.push(`/** Every problem \`code\` the API answers with. */\nexport type ErrorCode =\n${codes.map((c) => `  | ${lit(c)}`).join('\n')};\n`);

  const schemas = Object.entries<Schema>(doc.components.schemas).filter(([name]) => !['SignerView', 'OtpSent'].includes(name));
  for (const [name, schema] of schemas) {
    const t = typeOf(schema, 0);
    out.push(t.startsWith('{') ? `export interface ${name} ${t}\n` : `export type ${name} = ${t};\n`);
  }

  const ops = operationsOf(doc).sort((a, b) => a.operationId.localeCompare(b.operationId));
  out.push('/** The inputs and the success answer of each operation, by operationId. */');
  out.push('export interface Operations {');
  for (const o of ops) {
    out.push(comment(`${o.method} ${o.path}: ${o.summary}`, 1).trimEnd());
    out.push(`  ${o.operationId}: {\n    params: ${o.params};\n    query: ${o.query};\n    body: ${o.body};\n    response: ${o.response};\n  };`);
  }
  out.push('}\n');
  out.push('/** Where each operation lives. */');
  out.push('export const OPERATIONS = {');
  for (const o of ops) out.push(`  ${o.operationId}: { method: ${lit(o.method)}, path: ${lit(o.path)} },`);
  out.push('} as const;\n');
  out.push('export type OperationId = keyof Operations;');
  return `${out.join('\n')}\n`;
};
