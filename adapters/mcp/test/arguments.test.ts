import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { TOOLS, argumentsSchema } from '../src/tools.js';

// A tool checks the shape of its arguments before it calls the API, and leaves the API's bounds on values to the API,
// which checks them after the caller's scope and logs the call, as it does a direct call's (spec: "the same
// permission check … the same log entries as a direct call").
const ajv = new Ajv({ strict: false, allErrors: true });
const tool = (name: string) => TOOLS.find((t) => t.name === name)!;
const checks = (name: string) => {
  const checked = ajv.compile(argumentsSchema(tool(name).inputSchema));
  const advertised = ajv.compile(tool(name).inputSchema);
  return (args: Record<string, unknown>) => ({ checked: checked(args), advertised: advertised(args) });
};

describe('what a tool checks before it calls the API', () => {
  it('lets through what only the API’s bounds refuse, while the advertised inputSchema still states them', () => {
    const list = checks('list_documents');
    expect(list({ limit: 500 })).toEqual({ checked: true, advertised: false });
    expect(list({ limit: 1.5, order: 'sideways', status: 'LOST' })).toEqual({ checked: true, advertised: false });
    expect(checks('get_document')({ documentId: 'doc_bad' })).toEqual({ checked: true, advertised: false });
    expect(checks('add_field')({ requestId: 'req_x', documentId: 'doc_x', recipientId: 'rcp_x', type: 'stamp', page: 0, x: -1, y: 1e9, width: 0, height: 1 })).toEqual({ checked: true, advertised: false });
    expect(checks('upload_document')({ name: '', contentBase64: 'JVBERi0=' })).toEqual({ checked: true, advertised: false });
  });

  it('refuses what would break the API client or is no argument of the tool: types, unknown or missing arguments', () => {
    const list = checks('list_documents');
    expect(list({ limit: '5' }).checked).toBe(false);
    expect(list({ surprise: true }).checked).toBe(false);
    expect(checks('get_document')({}).checked).toBe(false);
    expect(checks('create_signature_request')({ title: 'x', documentIds: 'doc_1' }).checked).toBe(false);
  });

  it('keeps every constraint of the tool’s own arguments, and an id names one path segment', () => {
    const create = checks('create_signature_request');
    expect(create({ title: 'x', documentIds: ['doc_1'], idempotencyKey: 'a\nb' }).checked).toBe(false);
    expect(create({ title: 'x', documentIds: ['doc_1'], idempotencyKey: 'é' }).checked).toBe(false);
    expect(checks('upload_document')({ name: 'a.pdf', contentBase64: '' }).checked).toBe(false);
    for (const documentId of ['', '.', '..']) expect(checks('get_document')({ documentId }).checked, documentId).toBe(false);
  });
});
