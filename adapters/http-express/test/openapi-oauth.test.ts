import { describe, expect, it } from 'vitest';
import type { EsigHttpDeps } from '../src/deps.js';
import { buildOpenApi } from '../src/openapi.js';
import { buildRoutes } from '../src/routes.js';
import { buildSignerRoutes } from '../src/signer-routes.js';

describe('the OpenAPI document’s oauth2 scheme', () => {
  it('names the authorization server’s endpoints as its router does, whether the public URL ends in a slash or not', () => {
    for (const publicUrl of ['https://sign.example.com', 'https://sign.example.com/']) {
      const opts = { publicUrl, embedSessionTtlS: 300 } as Parameters<typeof buildSignerRoutes>[1];
      const doc = buildOpenApi(buildRoutes({} as EsigHttpDeps, opts), buildSignerRoutes({} as EsigHttpDeps, opts), publicUrl) as any;
      expect(doc.components.securitySchemes.oauth2.flows.authorizationCode, publicUrl).toMatchObject({
        authorizationUrl: 'https://sign.example.com/oauth/authorize',
        tokenUrl: 'https://sign.example.com/oauth/token',
        refreshUrl: 'https://sign.example.com/oauth/token',
      });
    }
  });
});
