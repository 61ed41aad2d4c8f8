// The baseline for bench:api: the least an Express JSON endpoint can do. Prints its port on stdout.
import express from 'express';
import type { AddressInfo } from 'node:net';

const app = express();
app.use(express.json());
app.post('/bare', (req, res) => void res.status(201).json({ id: 'req_x', title: req.body.title, status: 'DRAFT' }));
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
