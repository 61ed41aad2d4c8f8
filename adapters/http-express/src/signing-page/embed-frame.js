// The frame side of embedded signing (docs/embedding.md, CONTRACT "Embedded signing"). On an /embed/ page the
// server puts a JSON configuration in <script id="esig-embed">: the bound origin, the request and recipient,
// and either the signer credential or the error to report. This module takes it into memory, removes it from
// the DOM, and talks to the host page: messages go to window.parent with targetOrigin = the bound origin
// (never "*"); only a `hello` whose origin is the bound origin and whose source is window.parent is obeyed.

/** Reads and removes the embed configuration; null on a /sign/ page (or when not framed by anyone). */
export function takeEmbedConfig() {
  const node = document.getElementById('esig-embed');
  if (!node) return null;
  node.remove();
  try {
    const c = JSON.parse(node.textContent || 'null');
    return c && typeof c.origin === 'string' ? c : null;
  } catch {
    return null;
  }
}

/**
 * A channel to the host for one embed configuration: `post(type, extra)` sends one message, `onHello(fn)`
 * runs `fn` for each genuine `hello`. Outside a frame (the page opened on its own) posting does nothing.
 */
export function hostChannel(config) {
  const framed = window.parent !== window;
  const hellos = [];
  const post = (type, extra = {}) => {
    if (!framed) return;
    const message = { esig: 1, type, requestId: config.requestId, recipientId: config.recipientId, at: new Date().toISOString(), ...extra };
    window.parent.postMessage(message, config.origin);
  };
  window.addEventListener('message', (event) => {
    if (event.origin !== config.origin || event.source !== window.parent) return;
    const data = event.data;
    if (!data || data.esig !== 1 || data.type !== 'hello') return;
    for (const fn of hellos) fn();
  });
  return { post, onHello: (fn) => hellos.push(fn), framed };
}

/** Reports the content's height (`resize`) whenever it changes, so a host can size the frame to fit. */
export function reportHeight(channel) {
  if (!channel.framed || typeof ResizeObserver !== 'function') return;
  let last = -1;
  const send = () => {
    const height = Math.ceil(document.documentElement.scrollHeight);
    if (height === last) return;
    last = height;
    channel.post('resize', { height });
  };
  new ResizeObserver(send).observe(document.body);
  send();
}
