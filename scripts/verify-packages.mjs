#!/usr/bin/env node
// `npm run verify:packages`: what a team outside this repository gets from npm. Packs every publishable
// package, installs the tarballs in a fresh project in the system's temp directory, and there
//   1. type-checks a consumer written against the public entry points with `strict` and `NodeNext`;
//   2. runs the embedded-core example, compiled, with plain `node` (no TypeScript loader), to a finished PDF
//      and its evidence certificate;
//   3. runs the store contract for one port against a single-port adapter written in that project, and shows
//      the contract fails an adapter that stores only document ids (the seal's artifacts have other keys).
// Exits non-zero on the first failure, printing what failed.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const step = (what) => console.log(`\n==> ${what}`);
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const { references } = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));
const packages = references
  .map(({ path }) => join(root, dirname(path)))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private);

const work = mkdtempSync(join(tmpdir(), 'esig-verify-'));
const tarballs = join(work, 'tarballs');
const project = join(work, 'consumer');
mkdirSync(tarballs);
mkdirSync(project);

try {
  step('build');
  sh(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });

  step(`pack ${packages.length} packages`);
  const packed = {};
  for (const { dir, pkg } of packages) {
    const [info] = JSON.parse(sh(npm, ['pack', '--json', '--pack-destination', tarballs], { cwd: dir }));
    const files = info.files.map((f) => f.path);
    for (const required of ['package.json', 'LICENSE', 'README.md', 'dist/index.js', 'dist/index.d.ts'])
      if (!files.includes(required)) throw new Error(`${pkg.name}: the tarball lacks ${required}`);
    if (files.some((f) => f.startsWith('test/') || f.endsWith('.tsbuildinfo'))) throw new Error(`${pkg.name}: the tarball carries tests or build info`);
    packed[pkg.name] = join(tarballs, info.filename);
    console.log(`  ${pkg.name}: ${info.filename}, ${files.length} files, ${Math.round(info.unpackedSize / 1024)} KiB unpacked`);
  }

  step('install the tarballs in a project outside the repository');
  const pin = (name) => rootPkg.devDependencies?.[name] ?? JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'esig-consumer',
        private: true,
        type: 'module',
        dependencies: {
          ...Object.fromEntries(Object.entries(packed).map(([name, file]) => [name, `file:${file}`])),
          'fp-ts': pin('fp-ts'),
          'io-ts': pin('io-ts'),
          'pdf-lib': pin('pdf-lib'),
        },
        devDependencies: { typescript: pin('typescript'), vitest: pin('vitest'), '@types/node': pin('@types/node') },
      },
      null,
      2,
    ),
  );
  sh(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project, stdio: 'inherit' });

  step('type-check a consumer with strict and NodeNext');
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, include: ['*.ts'] }, null, 2),
  );
  cpSync(join(root, 'scripts', 'verify-packages', 'consumer.ts'), join(project, 'consumer.ts'));
  sh(join(project, 'node_modules', '.bin', 'tsc'), ['-p', project], { cwd: project, stdio: 'inherit' });
  console.log('  no errors');

  step('run the embedded-core example with plain node');
  cpSync(join(root, 'examples', 'embedded-core', 'dist'), join(project, 'embedded-core'), { recursive: true });
  const out = join(project, 'out');
  const printed = sh(process.execPath, [join(project, 'embedded-core', 'index.js'), join(project, 'embedded.db'), out], { cwd: project, env: { ...process.env, NODE_OPTIONS: '' } });
  process.stdout.write(`${printed.trimEnd().replace(/^/gm, '  ')}\n`);
  for (const f of ['finished.pdf', 'certificate.pdf']) {
    const bytes = readFileSync(join(out, f));
    if (!bytes.subarray(0, 5).equals(Buffer.from('%PDF-'))) throw new Error(`${f} is not a PDF`);
    console.log(`  ${f}: ${bytes.length} bytes`);
  }

  step('a single-port adapter outside the repository runs its port’s contract group');
  cpSync(join(root, 'scripts', 'verify-packages', 'contents-adapter.test.ts'), join(project, 'contents-adapter.test.ts'));
  writeFileSync(join(project, 'vitest.config.ts'), "export default { test: { include: ['*.test.ts'] } };\n");
  const vitest = join(project, 'node_modules', '.bin', 'vitest');
  sh(vitest, ['run'], { cwd: project, stdio: 'inherit', env: { ...process.env, ESIG_CONTENTS: 'map' } });
  let failed = false;
  try {
    sh(vitest, ['run'], { cwd: project, stdio: 'pipe', env: { ...process.env, ESIG_CONTENTS: 'documents-only' } });
  } catch {
    failed = true;
  }
  if (!failed) throw new Error('the contract passed an adapter that stores only document ids');
  console.log('  and fails an adapter that stores only document ids, as it must');

  console.log('\nverify:packages: every check passed');
} finally {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
