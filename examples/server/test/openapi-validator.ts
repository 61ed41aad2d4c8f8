import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with the plugin both as module.exports and as its `default`.
const addFormats = addFormatsModule.default;

/** Paths the server answers that are not part of the API the document describes (pages, health, the document itself). */
const OUTSIDE_THE_API = /^\/(?!api\/v1\/)|^\/api\/v1\/openapi\.json\/?$/i;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const baseType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

interface Operation {
  readonly template: string;
  readonly method: string;
  readonly regex: RegExp;
  readonly params: number;
  readonly op: { responses: Record<string, { headers?: Record<string, { required?: boolean }>; content?: Record<string, { schema?: unknown }> }> };
}

/**
 * Checks real responses against the OpenAPI document: the operation must list the status, the response's
 * content type must be one it documents for that status, a JSON body must satisfy its schema, and every
 * header documented as required must be there. A path under `/api/v1` that the document does not describe
 * may only be answered as an unknown route (404 problem+json).
 */
export const createResponseValidator = (spec: any) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(spec, 'openapi.json');
  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (ref: string) => {
    let v = compiled.get(ref);
    if (!v) {
      v = ajv.compile({ $ref: `openapi.json#/${ref}` });
      compiled.set(ref, v);
    }
    return v;
  };

  const operations: Operation[] = Object.entries<any>(spec.paths)
    .flatMap(([template, methods]) =>
      Object.entries<any>(methods).map(([method, op]) => ({
        template,
        method: method.toUpperCase(),
        regex: new RegExp(`^${template.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}/?$`, 'i'),
        params: (template.match(/\{/g) ?? []).length,
        op,
      })),
    )
    // As Express routes: case-insensitive, a trailing slash allowed. A literal segment wins over a parameter.
    .sort((a, b) => a.params - b.params);

  const stats = { validated: 0, outsideTheApi: 0 };

  const resolve = (schema: any): any => {
    let x = schema;
    while (x?.$ref) x = x.$ref.replace('#/', '').split('/').reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    return x ?? {};
  };
  /**
   * Keys of `value` that its schema does not name. JSON Schema lets an object without `additionalProperties`
   * carry any other key, so a new response field would pass ajv unseen; here it is drift from the document.
   */
  const undocumentedKeys = (schema: any, value: unknown, at: string): string[] => {
    const s = resolve(schema);
    if (Array.isArray(value)) return s.items ? value.flatMap((x, i) => undocumentedKeys(s.items, x, `${at}[${i}]`)) : [];
    if (value === null || typeof value !== 'object') return [];
    const branches = [s, ...(s.allOf ?? []).map(resolve), ...(s.anyOf ?? []).map(resolve).filter((b: any) => b.type === 'object' || b.properties || b.allOf)];
    const expanded = branches.flatMap((b: any) => [b, ...(b.allOf ?? []).map(resolve)]);
    const properties = Object.assign({}, ...expanded.map((b: any) => b.properties ?? {}));
    const additional = expanded.find((b: any) => typeof b.additionalProperties === 'object')?.additionalProperties;
    if (Object.keys(properties).length === 0 && additional === undefined) return []; // a free-form object (`data` of an event)
    return Object.entries(value).flatMap(([k, v]) =>
      k in properties ? undocumentedKeys(properties[k], v, `${at}.${k}`) : additional !== undefined ? undocumentedKeys(additional, v, `${at}.${k}`) : [`${at}.${k}`],
    );
  };

  const checkBody = (where: string, ref: string, body: unknown, problems: string[]) => {
    const validate = validatorAt(ref);
    if (!validate(body)) problems.push(`${where}: body does not match ${ref}: ${ajv.errorsText(validate.errors, { separator: '; ' })}`);
    const extra = undocumentedKeys({ $ref: `#/${ref}` }, body, '');
    if (extra.length > 0) problems.push(`${where}: keys the document does not describe: ${extra.join(', ')}`);
  };

  /** Throws, naming each difference, when the response is not what the document says. */
  const check = (method: string, url: string, res: { status: number; headers: Headers; body: unknown }) => {
    // The path as the request line carried it: fetch resolves dot segments (`/documents/.` is `/documents/`).
    const path = new URL(url, 'http://esig.invalid').pathname;
    const where = `${method} ${path} → ${res.status}`;
    if (OUTSIDE_THE_API.test(path)) {
      stats.outsideTheApi++;
      return;
    }
    const problems: string[] = [];
    const contentType = baseType(res.headers.get('content-type'));
    const found = operations.find((o) => o.method === method.toUpperCase() && o.regex.test(path));
    if (!found) {
      if (res.status !== 404 || contentType !== 'application/problem+json') problems.push(`${where}: not in the OpenAPI document, and not answered as an unknown route`);
      else checkBody(where, pointer('components', 'schemas', 'Problem'), res.body, problems);
    } else {
      const response = found.op.responses[String(res.status)] ?? found.op.responses.default;
      if (!response) problems.push(`${where}: ${found.method} ${found.template} does not document status ${res.status}`);
      else {
        const content = response.content ?? {};
        if (Object.keys(content).length === 0) {
          if (contentType !== '' && res.body !== '') problems.push(`${where}: documented without a body, answered ${contentType}`);
        } else if (!(contentType in content)) {
          problems.push(`${where}: content type ${contentType || '(none)'} is not among ${Object.keys(content).join(', ')}`);
        } else if (contentType.endsWith('json')) {
          const status = found.op.responses[String(res.status)] ? String(res.status) : 'default';
          checkBody(where, pointer('paths', found.template, found.method.toLowerCase(), 'responses', status, 'content', contentType, 'schema'), res.body, problems);
        }
        for (const [name, h] of Object.entries(response.headers ?? {}))
          if (h.required && !res.headers.has(name)) problems.push(`${where}: required header ${name} is missing`);
      }
    }
    if (problems.length > 0) throw new Error(`The response does not match the OpenAPI document:\n${problems.join('\n')}`);
    stats.validated++;
  };

  /** Errors of `value` against a schema fragment of the document (its `$ref`s point into the document). */
  const validateSchema = (schema: unknown, value: unknown): string[] => {
    const rebased = JSON.parse(JSON.stringify(schema ?? {}).replace(/"\$ref":"#\//g, '"$ref":"openapi.json#/'));
    const validate = ajv.compile(rebased);
    return validate(value) ? [] : [ajv.errorsText(validate.errors, { separator: '; ' })];
  };

  return { check, stats, validateSchema };
};

export type ResponseValidator = ReturnType<typeof createResponseValidator>;
