import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import validatorIsEmail from 'validator/lib/isEmail.js';

/** A JSON Schema fragment (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type JsonSchema = { readonly [k: string]: unknown };

// Codecs that io-ts cannot describe structurally (refinements, parsers of query strings) carry their schema
// here, so the OpenAPI document is generated from the very codecs that validate requests.
const annotations = new WeakMap<t.Mixed, JsonSchema>();

export const annotate = <C extends t.Mixed>(codec: C, schema: JsonSchema): C => {
  annotations.set(codec, schema);
  return codec;
};

/** A string with length bounds and an optional pattern / format. */
export const str = (opts: { min?: number; max?: number; pattern?: RegExp; format?: string; description?: string; name?: string } = {}) => {
  const { min = 0, max = 10_000, pattern } = opts;
  const codec = new t.Type<string, string, unknown>(
    opts.name ?? 'string',
    (u): u is string => typeof u === 'string' && u.length >= min && u.length <= max && (!pattern || pattern.test(u)),
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c, 'must be a string');
      if (u.length < min) return t.failure(u, c, min === 1 ? 'must not be empty' : `must have at least ${min} characters`);
      if (u.length > max) return t.failure(u, c, `must have at most ${max} characters`);
      if (pattern && !pattern.test(u)) return t.failure(u, c, opts.description ?? `must match ${pattern.source}`);
      return t.success(u);
    },
    t.identity,
  );
  return annotate(codec, {
    type: 'string',
    ...(min > 0 ? { minLength: min } : {}),
    maxLength: max,
    ...(pattern ? { pattern: pattern.source } : {}),
    ...(opts.format ? { format: opts.format } : {}),
  });
};

// validator's modules are CommonJS with the function both as module.exports and as its `default`.
const isEmail = validatorIsEmail.default;
const EMAIL_RULES = { allow_display_name: false, require_tld: true, allow_ip_domain: false, allow_utf8_local_part: true, ignore_max_length: false } as const;

/**
 * One mailbox address (`ada@example.com`), checked by validator.js rather than a hand-written pattern: no
 * display name, no list (`a,b@…`), no header injection, a domain with a TLD.
 */
export const emailAddress = annotate(
  new t.Type<string, string, unknown>(
    'email',
    (u): u is string => typeof u === 'string' && isEmail(u, EMAIL_RULES),
    (u, c) => (typeof u === 'string' && u.length <= 254 && isEmail(u, EMAIL_RULES) ? t.success(u) : t.failure(u, c, 'must be a single e-mail address')),
    t.identity,
  ),
  { type: 'string', format: 'email', maxLength: 254 },
);

/** A finite number within bounds; `integer` refuses fractions. */
export const num = (opts: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean } = {}) => {
  const { min = -Number.MAX_VALUE, max = Number.MAX_VALUE, integer = false, exclusiveMin = false } = opts;
  const what = integer ? 'an integer' : 'a number';
  const codec = new t.Type<number, number, unknown>(
    integer ? 'integer' : 'number',
    (u): u is number => typeof u === 'number' && Number.isFinite(u),
    (u, c) => {
      if (typeof u !== 'number' || !Number.isFinite(u)) return t.failure(u, c, `must be ${what}`);
      if (integer && !Number.isInteger(u)) return t.failure(u, c, `must be ${what}`);
      if (exclusiveMin ? u <= min : u < min) return t.failure(u, c, `must be ${exclusiveMin ? 'greater than' : 'at least'} ${min}`);
      if (u > max) return t.failure(u, c, `must be at most ${max}`);
      return t.success(u);
    },
    t.identity,
  );
  return annotate(codec, {
    type: integer ? 'integer' : 'number',
    ...(min > -Number.MAX_VALUE ? (exclusiveMin ? { exclusiveMinimum: min } : { minimum: min }) : {}),
    ...(max < Number.MAX_VALUE ? { maximum: max } : {}),
  });
};

/** A query-string integer ("25") decoded to a number within bounds; anything else is refused, never clamped. */
export const intFromQuery = (min: number, max: number, dflt: number) =>
  annotate(
    new t.Type<number, string, unknown>(
      'integer',
      (u): u is number => typeof u === 'number',
      (u, c) => {
        if (typeof u !== 'string' || !/^-?\d{1,6}$/.test(u)) return t.failure(u, c, `must be an integer from ${min} to ${max}`);
        const n = Number(u);
        return n >= min && n <= max ? t.success(n) : t.failure(u, c, `must be an integer from ${min} to ${max}`);
      },
      String,
    ),
    { type: 'integer', minimum: min, maximum: max, default: dflt },
  );

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether the fields of an ISO-8601 date-time name a real moment: `Date` silently moves 30 February to
 * 2 March, and a date that is not on the calendar is a client's mistake, not an intent.
 */
const isRealDateTime = (m: RegExpExecArray): boolean => {
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59) return false;
  const tz = m[7]!;
  if (tz !== 'Z' && (Number(tz.slice(1, 3)) > 23 || Number(tz.slice(4, 6)) > 59)) return false;
  return d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
};

/** An ISO-8601 date-time with a time zone, on the calendar, normalised to UTC with millisecond precision. */
export const dateTime = annotate(
  new t.Type<string, string, unknown>(
    'date-time',
    (u): u is string => typeof u === 'string',
    (u, c) => {
      const m = typeof u === 'string' ? DATE_TIME.exec(u) : null;
      if (m === null) return t.failure(u, c, 'must be an ISO 8601 date-time with a time zone');
      const d = new Date(u as string);
      return Number.isNaN(d.getTime()) || !isRealDateTime(m) ? t.failure(u, c, 'is not a valid date-time') : t.success(d.toISOString());
    },
    t.identity,
  ),
  { type: 'string', format: 'date-time' },
);

/** An id with the given prefix (`doc_…`). */
export const id = (prefix: string) =>
  str({ min: prefix.length + 27, max: prefix.length + 27, pattern: new RegExp(`^${prefix}_[0-9A-Za-z]{26}$`), description: `must be a ${prefix}_ id`, name: `${prefix}Id` });

/** A string enum from a readonly tuple. */
export const oneOf = <const V extends string>(values: readonly V[], name = 'enum') =>
  annotate(t.keyof(Object.fromEntries(values.map((v) => [v, null])) as { [K in V]: null }, name), { type: 'string', enum: values });

type Props = Record<string, t.Mixed>;

/**
 * An object codec that also refuses unknown keys, as Stripe does: a misspelt field is an error the client
 * sees, not a silently ignored value.
 */
export const object = <R extends Props, O extends Props = {}>(required: R, optional?: O, name = 'object') => {
  const inner = optional ? t.intersection([t.type(required), t.partial(optional)]) : t.type(required);
  const known = new Set([...Object.keys(required), ...Object.keys(optional ?? {})]);
  type A = t.TypeOf<t.TypeC<R>> & Partial<t.TypeOf<t.TypeC<O>>>;
  const codec = new t.Type<A, A, unknown>(
    name,
    (u): u is A => inner.is(u),
    (u, c) => {
      if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, 'must be a JSON object');
      const unknown = Object.keys(u).filter((k) => !known.has(k));
      if (unknown.length > 0)
        return t.failures(unknown.map((k) => ({ value: (u as Record<string, unknown>)[k], context: [...c, { key: k, type: t.never, actual: undefined }], message: 'is not a known field' })));
      // An entry naming the inner codec lets decode() recognise the branch indexes io-ts adds below it.
      return inner.validate(u, [...c, { key: '', type: inner, actual: u }]) as t.Validation<A>;
    },
    t.identity,
  );
  schemaOfObject.set(codec, { required, optional: optional ?? {} });
  return codec;
};
const schemaOfObject = new WeakMap<t.Mixed, { required: Props; optional: Props }>();

/** Nullable value. */
export const nullable = <C extends t.Mixed>(c: C) => t.union([c, t.null]);

/** An array with length bounds. */
export const arrayOf = <C extends t.Mixed>(item: C, opts: { min?: number; max?: number } = {}) => {
  const { min = 0, max = 1000 } = opts;
  const base = t.array(item);
  const codec = new t.Type<Array<t.TypeOf<C>>, Array<t.OutputOf<C>>, unknown>(
    `Array<${item.name}>`,
    base.is,
    (u, c): t.Validation<Array<t.TypeOf<C>>> =>
      E.chain((xs: Array<t.TypeOf<C>>): t.Validation<Array<t.TypeOf<C>>> =>
        xs.length < min ? t.failure(u, c, `must have at least ${min} item(s)`) : xs.length > max ? t.failure(u, c, `must have at most ${max} items`) : t.success(xs),
      )(base.validate(u, c) as t.Validation<Array<t.TypeOf<C>>>),
    base.encode,
  );
  arrays.set(codec, { item, min, max });
  return codec;
};
const arrays = new WeakMap<t.Mixed, { item: t.Mixed; min: number; max: number }>();

/**
 * A JSON object used as a map: every key must satisfy `key` and every value `value`, at most `max` entries.
 * Unlike `t.record` with a refined domain, which drops the keys its domain refuses (and leaves their values
 * unchecked), a bad key here is refused with its reason, like any other bad input.
 */
export const dictOf = <V extends t.Mixed>(key: t.Type<string, string, unknown>, value: V, opts: { max?: number; name?: string } = {}) => {
  const { max = 1000 } = opts;
  const codec = new t.Type<Record<string, t.TypeOf<V>>, Record<string, t.OutputOf<V>>, unknown>(
    opts.name ?? `Map<${key.name}, ${value.name}>`,
    (u): u is Record<string, t.TypeOf<V>> =>
      typeof u === 'object' && u !== null && !Array.isArray(u) && Object.entries(u).every(([k, v]) => key.is(k) && value.is(v)),
    (u, c) => {
      if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, 'must be an object');
      const entries = Object.entries(u);
      if (entries.length > max) return t.failure(u, c, `must have at most ${max} entries`);
      const errors: t.ValidationError[] = [];
      // No prototype: a key named `__proto__` is an own entry like any other (checked, and refused where
      // unknown), never a way to set the map's prototype.
      const out: Record<string, t.TypeOf<V>> = Object.create(null);
      for (const [k, v] of entries) {
        const at: t.Context = [...c, { key: k, type: value, actual: v }];
        const kr = key.validate(k, at);
        if (E.isLeft(kr)) {
          errors.push(...kr.left.map((e) => ({ ...e, value: k, message: `is not an accepted key: ${e.message ?? 'invalid'}` })));
          continue;
        }
        const vr = value.validate(v, at);
        if (E.isLeft(vr)) errors.push(...vr.left);
        else out[k] = vr.right;
      }
      return errors.length > 0 ? t.failures(errors) : t.success(out);
    },
    (a) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, value.encode(v)])),
  );
  dicts.set(codec, { key, value, max });
  return codec;
};
const dicts = new WeakMap<t.Mixed, { key: t.Mixed; value: t.Mixed; max: number }>();

/** The JSON Schema of a codec, following io-ts's own structure where no annotation exists. */
export const toJsonSchema = (codec: t.Mixed, named: ReadonlyMap<t.Mixed, string> = new Map()): JsonSchema => {
  const ref = named.get(codec);
  if (ref) return { $ref: `#/components/schemas/${ref}` };
  const ann = annotations.get(codec);
  if (ann) return ann;
  const obj = schemaOfObject.get(codec);
  if (obj) {
    const properties: Record<string, JsonSchema> = {};
    for (const [k, v] of Object.entries({ ...obj.required, ...obj.optional })) properties[k] = toJsonSchema(v, named);
    return { type: 'object', properties, required: Object.keys(obj.required), additionalProperties: false };
  }
  const dict = dicts.get(codec);
  if (dict) return { type: 'object', propertyNames: toJsonSchema(dict.key, named), additionalProperties: toJsonSchema(dict.value, named), maxProperties: dict.max };
  const arr = arrays.get(codec);
  if (arr) return { type: 'array', items: toJsonSchema(arr.item, named), ...(arr.min > 0 ? { minItems: arr.min } : {}), maxItems: arr.max };
  const c = codec as unknown as { _tag?: string; types?: t.Mixed[]; props?: Props; type?: t.Mixed; value?: unknown; keys?: object; domain?: t.Mixed; codomain?: t.Mixed };
  switch (c._tag) {
    case 'StringType': return { type: 'string' };
    case 'NumberType': return { type: 'number' };
    case 'BooleanType': return { type: 'boolean' };
    case 'NullType': return { type: 'null' };
    case 'UnknownType': return {};
    case 'AnyDictionaryType': return { type: 'object' };
    case 'LiteralType': return { const: c.value };
    case 'KeyofType': return { type: 'string', enum: Object.keys(c.keys!) };
    case 'UnionType': return { anyOf: c.types!.map((x) => toJsonSchema(x, named)) };
    case 'IntersectionType': {
      const parts = c.types!.map((x) => toJsonSchema(x, named));
      // `t.type` & `t.partial` (an object with optional keys) is one object: shown as one, not as `allOf`.
      const plain = (p: JsonSchema) => p.type === 'object' && p.properties !== undefined && p.additionalProperties === undefined && p.$ref === undefined;
      if (!parts.every(plain)) return { allOf: parts };
      return {
        type: 'object',
        properties: Object.assign({}, ...parts.map((p) => p.properties)),
        required: parts.flatMap((p) => (p.required as string[] | undefined) ?? []),
      };
    }
    case 'ArrayType':
    case 'ReadonlyArrayType': return { type: 'array', items: toJsonSchema(c.type!, named) };
    case 'DictionaryType':
      // A refined domain would silently drop keys it refuses: maps of constrained keys use dictOf.
      if ((c.domain as { _tag?: string } | undefined)?._tag !== 'StringType') throw new Error(`Use dictOf for ${codec.name}: t.record drops the keys its domain refuses`);
      return { type: 'object', additionalProperties: toJsonSchema(c.codomain!, named) };
    case 'InterfaceType':
    case 'ExactType':
    case 'PartialType': {
      const props = c.props ?? (c.type as unknown as { props?: Props })?.props ?? {};
      const properties: Record<string, JsonSchema> = {};
      for (const [k, v] of Object.entries(props)) properties[k] = toJsonSchema(v, named);
      return { type: 'object', properties, ...(c._tag === 'PartialType' ? {} : { required: Object.keys(props) }) };
    }
    default:
      throw new Error(`No JSON Schema for codec ${codec.name}`);
  }
};
