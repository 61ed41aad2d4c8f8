// The official MCP conformance suite against /mcp (scripts/mcp-conformance.mjs: the compiled server, a real
// OAuth token, the suite on the Node 22 it installs into a cache outside the project). Every selected
// server scenario must pass.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const repo = new URL('../../..', import.meta.url).pathname;
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

it(
  'passes the conformance suite’s server scenarios: initialize, ping, tools-list, dns-rebinding-protection',
  async () => {
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [join(repo, 'scripts/mcp-conformance.mjs'), ...SCENARIOS], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (c) => resolve({ code: c, out }));
    });
    console.log(out.split('\n').filter((l) => /SUCCESS|FAILURE|Passed:|^--- /.test(l)).join('\n'));
    expect(code, out).toBe(0);
    for (const s of SCENARIOS) expect(out, s).toMatch(new RegExp(`--- ${s}: exit 0`));
    expect(out).not.toMatch(/FAILURE/);
  },
  // The first run installs the suite and a Node 22 binary from the npm registry.
  600_000,
);
