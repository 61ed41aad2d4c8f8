// The 410 page of a used or expired embedded session: it tells the host why, then answers each `hello` the same.
import { hostChannel, reportHeight, takeEmbedConfig } from './embed-frame.js';

const config = takeEmbedConfig();
if (config && config.error) {
  const channel = hostChannel(config);
  const tell = () => channel.post('error', { code: config.error.code, message: config.error.message });
  channel.onHello(tell);
  tell();
  reportHeight(channel);
}
