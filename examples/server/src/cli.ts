import { parseArgs } from 'node:util';
import type { GrantedScope, Mode } from '@esig/core';
import { API_SCOPES } from '@esig/core';
import { describeFailure } from './failure.js';
import { JOBS_USAGE, UsageError, runJobsCommand } from './jobs-command.js';
import { ConfigError, configFromEnvironment, runWorkerProcess, startServer } from './main.js';
import { createKeyStandalone, listGrantsStandalone, migrate, revokeGrantStandalone, withJobStores } from './operator.js';

const USAGE = `esig — electronic signatures

Usage:
  esig serve                      start the API server (ESIG_PORT, default 3000)
  esig worker                     run the background workers only (mail, sealing, expiry, reminders)
  esig migrate                    apply pending database migrations
  esig keys create --org <name> --mode test|live --scopes <list|*> [--name <label>]
                                  create an API key and print its secret once
  esig oauth grants list --org <name>   list the OAuth grants of an org (both modes), revoked included
  esig oauth grants revoke <grantId>    revoke an OAuth grant: its tokens stop working immediately
${JOBS_USAGE}

Configuration comes from the environment (ESIG_DATABASE_URL, ESIG_PUBLIC_URL, …); see docs/configuration.md.`;

const fail = (msg: string): never => {
  process.stderr.write(`esig: ${msg}\n`);
  process.exit(2);
};

const main = async () => {
  const [command, sub, ...rest] = process.argv.slice(2);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return void process.stdout.write(`${USAGE}\n`);
  if (command !== 'keys' && command !== 'jobs' && (sub === '--help' || sub === '-h')) return void process.stdout.write(`${USAGE}\n`);
  if (command === 'jobs' && [sub, ...rest].some((a) => a === '--help' || a === '-h')) return void process.stdout.write(`${USAGE}\n`);
  const config = configFromEnvironment();

  switch (command) {
    case 'serve': {
      const running = await startServer(config);
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stdout.write(`esig: ${signal} received, finishing open requests…\n`);
        await running.close();
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      return;
    }
    case 'worker': {
      const running = await runWorkerProcess(config);
      process.stdout.write('esig: worker started\n');
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stdout.write(`esig: ${signal} received, finishing the job in hand…\n`);
        await running.stop();
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      return;
    }
    case 'migrate': {
      const n = await migrate(config);
      return void process.stdout.write(`esig: ${n} migration(s) applied\n`);
    }
    case 'keys': {
      if (sub !== 'create') return fail(`unknown command "keys ${sub ?? ''}"\n\n${USAGE}`);
      if (rest.includes('--help') || rest.includes('-h')) return void process.stdout.write(`${USAGE}\n`);
      let values: { org?: string; mode?: string; scopes?: string; name?: string };
      try {
        ({ values } = parseArgs({
          args: rest,
          options: { org: { type: 'string' }, mode: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
          strict: true,
        }));
      } catch (e) {
        // Node's message names the option ("Unknown option '--x'"); the usage says what is accepted.
        return fail(`${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
      }
      if (!values.org) return fail('--org <name> is required');
      if (values.mode !== 'test' && values.mode !== 'live') return fail('--mode must be test or live');
      const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (scopes.length === 0) return fail(`--scopes is required: a comma list of ${API_SCOPES.join(', ')}, or *`);
      const unknown = scopes.filter((s) => s !== '*' && !(API_SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0) return fail(`unknown scope(s): ${unknown.join(', ')}`);
      const issued = await createKeyStandalone(config, { orgName: values.org, mode: values.mode as Mode, scopes: scopes as GrantedScope[], name: values.name ?? 'cli' });
      process.stdout.write(`${JSON.stringify({ id: issued.key.id, org: issued.org.name, orgId: issued.org.id, mode: issued.key.mode, scopes: issued.key.scopes, secret: issued.secret }, null, 2)}\n`);
      process.stderr.write('esig: the secret above is shown once; it is stored only as a hash.\n');
      return;
    }
    case 'oauth': {
      const [verb, ...args] = rest;
      if (sub !== 'grants' || (verb !== 'list' && verb !== 'revoke')) return fail(`unknown command "oauth ${sub ?? ''} ${verb ?? ''}"\n\n${USAGE}`);
      if (verb === 'list') {
        const { values } = parseArgs({ args, options: { org: { type: 'string' } }, strict: true });
        if (!values.org) return fail(`--org is required\n\n${USAGE}`);
        const grants = await listGrantsStandalone(config, values.org);
        if (grants === null) return fail(`no org named "${values.org}"`);
        process.stdout.write(`${JSON.stringify(grants, null, 2)}\n`);
        return;
      }
      if (args[0] === undefined) return fail(`oauth grants revoke needs a grant id\n\n${USAGE}`);
      const revoked = await revokeGrantStandalone(config, args[0]);
      if (revoked === null) return fail(`no grant ${args[0]}`);
      process.stdout.write(`${JSON.stringify(revoked, null, 2)}\n`);
      return;
    }
    case 'jobs': {
      try {
        process.exitCode = await runJobsCommand(sub, rest, (f) => withJobStores(config, f), {
          out: (line) => process.stdout.write(`${line}\n`),
          err: (line) => process.stderr.write(`${line}\n`),
        });
      } catch (e) {
        if (e instanceof UsageError) return fail(`${e.message}\n\n${USAGE}`);
        throw e;
      }
      return;
    }
    default:
      return fail(`unknown command "${command}"\n\n${USAGE}`);
  }
};

main().catch((e: unknown) => {
  if (e instanceof ConfigError) fail(e.message);
  process.stderr.write(`esig: ${describeFailure(e)}\n`);
  process.exit(1);
});
