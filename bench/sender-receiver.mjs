/**
 * The receiver of `npm run bench:sender`, in a process of its own so that the bench's CPU figures are the
 * client's alone: HTTPS on loopback with the certificate at ESIG_BENCH_KEY/ESIG_BENCH_CERT, a 200 for every
 * request once its body is read. It sends its port to the parent and exits with it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const server = createServer({ key: readFileSync(process.env.ESIG_BENCH_KEY), cert: readFileSync(process.env.ESIG_BENCH_CERT) }, (req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
