// The esig signing page: a plain ES module, no framework and no build step.
// It reads the signing token from its own URL and talks to the signer API (docs/signer-api.md). Inside a
// host's page (/embed/…, docs/embedding.md) it takes its credential from the page instead, in memory only,
// and tells the host what the server recorded.
import { hostChannel, reportHeight, takeEmbedConfig } from './embed-frame.js';

const PDFJS = '/sign/assets/pdfjs/';
const TEXT_TYPES = new Set(['text', 'name', 'email', 'initials']);
const FIELD_NAMES = {
  text: 'Text', name: 'Full name', email: 'Email address', initials: 'Initials',
  checkbox: 'Checkbox', signature: 'Signature', date_signed: 'Date signed',
};
const MAX_DRAWN_BYTES = 200 * 1024;

const $ = (id) => document.getElementById(id);
const embed = takeEmbedConfig();
const channel = embed ? hostChannel(embed) : null;
const token = embed ? embed.credential || '' : tokenFromPath(location.pathname);
/** Tells the host (when embedded) something the server has recorded. */
const emit = (type, extra) => channel?.post(type, extra);
const apiUrl = (suffix = '') => `/api/v1/signing/${encodeURIComponent(token)}${suffix}`;

let state = null; // the last body the API returned
let signature = null; // { kind: 'typed' | 'drawn', value } once adopted
let signAfterAdopting = false;
let busy = false;
let documentsLoaded = false;
let viewRecorded = false;
const fields = new Map(); // field id → { field, box, input }
const pages = []; // { docId, pageNo, pdfPage, width, height, wrap, canvas, layer, renderedScale, task }

function tokenFromPath(path) {
  const parts = path.split('/').filter(Boolean);
  const i = parts.lastIndexOf('sign');
  try {
    return i >= 0 && parts[i + 1] ? decodeURIComponent(parts[i + 1]) : '';
  } catch {
    return '';
  }
}

/** Creates an element with attributes and children (strings become text, never HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : String(v));
  node.append(...children);
  return node;
}

// ---------------------------------------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, message, problem) {
    super(message);
    this.status = status;
    this.problem = problem;
  }
}

async function call(method, suffix = '', body) {
  const init = { method, cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json, application/problem+json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(apiUrl(suffix), init);
  } catch {
    const message = 'We could not reach the server. Check your connection and try again.';
    emit('error', { code: 'network', message });
    throw new ApiError(0, message);
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data?.detail || data?.title || `Something went wrong (HTTP ${res.status}).`, data);
  return data;
}

// ------------------------------------------------------------------------------------------ Helpers

let announcements = 0;
function announce(text, kind = 'info') {
  const status = $('status');
  const n = ++announcements;
  status.className = `status ${kind}`;
  status.textContent = '';
  // A fresh text node, a moment later, is announced even when the words repeat.
  requestAnimationFrame(() => { if (n === announcements) status.textContent = text; });
}

function clearStatus() {
  announcements++;
  $('status').textContent = '';
}

function showError(id, text) {
  const p = $(id);
  p.textContent = text || '';
  p.hidden = !text;
}

function show(view) {
  $('loading').hidden = true;
  for (const id of ['message', 'identify', 'signing']) $(id).hidden = id !== view;
  $('action-bar').hidden = view !== 'signing';
}

const fullName = (r) => [r.firstName, r.lastName].filter(Boolean).join(' ');
const quoted = (title) => `“${title}”`;
const today = () => new Date().toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric' });
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

function showMessage(heading, paragraphs, download = false) {
  show('message');
  clearStatus(); // the focused heading says it all
  $('message-heading').textContent = heading;
  const body = $('message-body');
  body.replaceChildren(...paragraphs.map((t) => el('p', {}, t)));
  if (download) {
    const link = el('a', { href: apiUrl('/document'), class: 'button primary', download: true }, 'Download the signed document (PDF)');
    body.append(el('p', {}, link));
  }
  $('message-heading').focus();
}

// ------------------------------------------------------------------------------------------- States

/** The message for every state but "identify" and "sign", or null. `outcome` is what the user just did. */
function messageFor(s, outcome) {
  const { request: req, recipient: rcp } = s;
  const title = quoted(req.title);
  const thanks = outcome === 'signed' ? [`Your signature on ${title} has been recorded.`] : [];
  const heading = (h) => (outcome === 'signed' ? 'Thank you — you’ve signed' : h);
  if (rcp.status === 'DECLINED')
    return { heading: 'You declined to sign', lines: [`You declined to sign ${title}. The sender has been told. There is nothing more for you to do.`] };
  // Every signer has signed: COMPLETED once the finished document exists, SENT while it is being produced.
  if (req.status === 'COMPLETED' || (req.status === 'SENT' && s.everyoneSigned))
    return {
      heading: heading('This document is complete'),
      lines: [...thanks, `Everyone has signed ${title}.`, s.finishedDocumentAvailable ? 'You can download the signed document below.' : 'The signed document is being prepared; it will appear here in a moment, and we’ll email it to you.'],
      download: s.finishedDocumentAvailable,
    };
  if (req.status === 'DECLINED')
    return { heading: 'This request was declined', lines: [`Someone declined to sign ${title}, so it can no longer be signed. The sender has been told.`] };
  if (req.status === 'EXPIRED')
    return { heading: 'This request has expired', lines: [`The deadline to sign ${title} has passed. Contact the sender if you still need to sign it.`] };
  if (req.status === 'CANCELLED')
    return { heading: 'This request was cancelled', lines: [`The sender cancelled ${title}. There is nothing for you to sign.`] };
  if (rcp.status === 'SIGNED')
    return { heading: heading('You’ve already signed'), lines: [...thanks, `You signed ${title}. We’ll email you the finished document once everyone has signed.`] };
  if (rcp.locked)
    return { heading: 'Identification is locked', lines: ['The code was entered wrongly too many times, so this link is locked. Contact the sender to get a new signing link.'] };
  if (!rcp.authenticated) return null;
  if (rcp.role !== 'signer')
    return { heading: 'Nothing for you to sign', lines: [`You receive a copy of ${title}. We’ll email it to you once everyone has signed.`] };
  if (!rcp.yourTurn)
    return { heading: 'It’s not your turn yet', lines: [`Other people need to sign ${title} before you. We’ll email you when it’s your turn.`] };
  return null;
}

function render(s, outcome) {
  state = s;
  const { request: req, recipient: rcp } = s;
  document.title = `${req.title} — sign`;
  $('title').textContent = req.title;
  $('subtitle').textContent = `For ${fullName(rcp)}`;
  $('test-banner').hidden = !req.testMode;
  const m = messageFor(s, outcome);
  if (m) return showMessage(m.heading, m.lines, m.download);
  if (!rcp.authenticated) return showIdentify(rcp);
  return showSigning(s);
}

/**
 * While every signer has signed and the finished document is being produced (the request is still SENT),
 * asks again, less and less often, for about three minutes: once the request is COMPLETED the host hears
 * `request.completed` and the page offers the download. A 429 waits its `Retry-After`; a network error or
 * another failure is tried again at the next turn. If the document is still not there at the end, the page
 * says to reload later (the e-mail with the document comes anyway).
 */
let awaiting = false;
// Also a request an older release made COMPLETED before its finished document existed.
const documentPending = (s) => (s.request.status === 'SENT' && s.everyoneSigned) || (s.request.status === 'COMPLETED' && !s.finishedDocumentAvailable);
async function awaitCompletion(outcome) {
  if (awaiting || !state || !documentPending(state)) return;
  awaiting = true;
  const started = Date.now();
  let wait = 1000;
  try {
    while (Date.now() - started < 180_000) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 1.5, 5000);
      const s = await fetch(apiUrl(''), { cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } }).then(
        async (res) => {
          if (res.status === 429) wait = Math.min(Math.max(wait, 1000 * (Number(res.headers.get('Retry-After')) || 5)), Math.max(0, started + 180_000 - Date.now()));
          return res.ok ? res.json() : null;
        },
        () => null,
      ).catch(() => null);
      if (!s || !s.request || documentPending(s)) continue;
      if (s.request.status === 'COMPLETED') emit('request.completed');
      render(s, outcome);
      return;
    }
    announce('The signed document is taking longer than usual. Reload this page in a few minutes, or wait for the email.');
  } finally {
    awaiting = false;
  }
}

/** Whether this recipient can still sign (else the host is told `invalid_state`). */
const canSign = (s) =>
  s.request.status === 'SENT' && s.recipient.role === 'signer' && !['SIGNED', 'DECLINED'].includes(s.recipient.status) && s.recipient.yourTurn && !s.recipient.locked;

const emitReady = () => emit('ready', { status: state.recipient.status, requestStatus: state.request.status });

async function start() {
  if (!token) return showMessage('This signing link isn’t valid', ['The address is incomplete. Open the whole link from your email.']);
  if (channel) reportHeight(channel);
  try {
    render(await call('GET'));
    if (channel) {
      emitReady();
      channel.onHello(() => { if (state) emitReady(); });
      if (!canSign(state)) emit('error', { code: 'invalid_state', message: $('message-heading').textContent || 'This request cannot be signed now.' });
    }
    awaitCompletion().catch(() => {});
  } catch (e) {
    if (e.status === 404)
      showMessage('This signing link isn’t valid', ['We couldn’t find anything to sign at this address. Check that you opened the whole link from your email, or ask the sender for a new one.']);
    else showMessage('Something went wrong', [e.message, 'Reload the page to try again.']);
  }
}

// ----------------------------------------------------------------------------------- Identification

function showIdentify(rcp) {
  show('identify');
  const otp = rcp.authentication === 'email_otp';
  $('identify-intro').textContent = otp
    ? 'To protect this document, we’ll email you a 6-digit code. Send the code, then enter it below.'
    : 'Enter the access code the sender gave you to open this document.';
  $('otp-row').hidden = !otp;
  document.querySelector('label[for="code"]').textContent = otp ? 'Code from the email' : 'Access code';
  $('code').inputMode = otp ? 'numeric' : 'text';
  $('identify-heading').focus();
}

$('send-code').addEventListener('click', async () => {
  const button = $('send-code');
  button.disabled = true;
  showError('code-error', '');
  try {
    const { sentTo } = await call('POST', '/otp', {});
    announce(`We sent a code to ${sentTo}. It is valid for 10 minutes.`, 'success');
    button.textContent = 'Send a new code';
    $('code').focus();
  } catch (e) {
    showError('code-error', e.message);
    announce(e.message, 'error');
  } finally {
    button.disabled = false;
  }
});

$('identify-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  if (busy) return;
  const input = $('code');
  const code = input.value.trim();
  if (!code) {
    input.setAttribute('aria-invalid', 'true');
    showError('code-error', 'Enter the code.');
    return input.focus();
  }
  busy = true;
  try {
    const body = await call('POST', '/authenticate', { code });
    input.removeAttribute('aria-invalid');
    showError('code-error', '');
    announce('Thank you, you’re identified.', 'success');
    emit('signer.authenticated');
    render(body);
  } catch (e) {
    input.setAttribute('aria-invalid', 'true');
    showError('code-error', e.message);
    announce(e.message, 'error');
    input.select();
    // The last allowed attempt locks the link: show that rather than another "wrong code".
    await call('GET').then((s) => s.recipient.locked && render(s)).catch(() => {});
  } finally {
    busy = false;
  }
});

// ------------------------------------------------------------------------------------------ Signing

function showSigning(s) {
  show('signing');
  const { request: req, recipient: rcp } = s;
  const intro = [el('p', {}, `Hello ${rcp.firstName}, please review ${quoted(req.title)} below, fill in your fields and sign.`)];
  if (req.message) intro.push(el('blockquote', { class: 'sender-message' }, req.message));
  if (req.expiresAt) intro.push(el('p', {}, `Please sign by ${new Date(req.expiresAt).toLocaleString('en-US', { dateStyle: 'long', timeStyle: 'short' })}.`));
  if (s.fields.some((f) => f.required)) intro.push(el('p', { class: 'hint' }, 'Fields marked with * are required.'));
  $('intro').replaceChildren(...intro);
  $('signing-heading').focus();
  if (!documentsLoaded) {
    documentsLoaded = true;
    loadDocuments(s).catch((e) => {
      const text = `The document could not be shown: ${e.message}`;
      $('documents').append(el('p', { class: 'error' }, text));
      announce(text, 'error');
    });
  }
}

async function loadDocuments(s) {
  const container = $('documents');
  container.replaceChildren(el('p', { class: 'notice' }, 'Loading the document…'));
  const pdfjs = await import(`${PDFJS}pdf.min.mjs`);
  pdfjs.GlobalWorkerOptions.workerSrc = `${PDFJS}pdf.worker.min.mjs`;
  container.replaceChildren();
  for (const doc of s.documents) {
    const section = el('section', { class: 'document', 'aria-label': doc.name });
    section.append(el('h3', {}, doc.name, el('span', { class: 'doc-meta' }, ` · ${plural(doc.pageCount, 'page', 'pages')}`)));
    container.append(section);
    const res = await fetch(apiUrl(`/documents/${encodeURIComponent(doc.id)}`), { cache: 'no-store', credentials: 'same-origin' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const pdf = await pdfjs.getDocument({ data: new Uint8Array(await res.arrayBuffer()), isEvalSupported: false }).promise;
    for (let n = 1; n <= pdf.numPages; n++) {
      const pdfPage = await pdf.getPage(n);
      const { width, height } = pdfPage.getViewport({ scale: 1 });
      const label = `${doc.name}, page ${n} of ${pdf.numPages}`;
      const wrap = el('div', { class: 'page', role: 'group', 'aria-label': label, 'data-document': doc.id, 'data-page': n });
      wrap.style.aspectRatio = `${width} / ${height}`;
      const canvas = el('canvas', { role: 'img', 'aria-label': label });
      const layer = el('div', { class: 'field-layer' });
      wrap.append(canvas, layer);
      section.append(wrap);
      const page = { docId: doc.id, pageNo: n, pdfPage, width, height, wrap, canvas, layer, renderedScale: 0, task: null };
      pages.push(page);
      addFields(page, s);
      layoutPage(page);
      await renderPage(page);
      if (!viewRecorded) {
        viewRecorded = true;
        call('POST', '/view', {}).then(() => emit('request.viewed'), () => {});
      }
    }
  }
  new ResizeObserver(onResize).observe(container);
  updateProgress();
  announce(`The document is ready. ${plural(fields.size, 'field is', 'fields are')} waiting for you.`);
}

async function renderPage(page) {
  const cssWidth = page.wrap.clientWidth;
  if (!cssWidth) return;
  const scale = (cssWidth / page.width) * Math.min(window.devicePixelRatio || 1, 3);
  if (Math.abs(scale - page.renderedScale) < 0.01) return;
  page.task?.cancel();
  const viewport = page.pdfPage.getViewport({ scale });
  // Render off-screen, then swap: no blank flash while resizing.
  const canvas = el('canvas', { role: 'img', 'aria-label': page.canvas.getAttribute('aria-label') });
  canvas.width = Math.floor(viewport.width);
  canvas.height = Math.floor(viewport.height);
  const task = page.pdfPage.render({ canvas, viewport });
  page.task = task;
  try {
    await task.promise;
  } catch (e) {
    if (e?.name === 'RenderingCancelledException') return;
    throw e;
  }
  page.canvas.replaceWith(canvas);
  page.canvas = canvas;
  page.renderedScale = scale;
  page.task = null;
}

let resizeTimer = 0;
function onResize() {
  for (const page of pages) layoutPage(page);
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => pages.forEach((p) => renderPage(p).catch(() => {})), 150);
}

// ------------------------------------------------------------------------------------------- Fields

function addFields(page, s) {
  const own = s.fields
    .filter((f) => f.documentId === page.docId && f.page === page.pageNo)
    .sort((a, b) => a.y - b.y || a.x - b.x);
  for (const f of own) {
    const { box, input } = makeField(f, s.recipient, page.pageNo);
    page.layer.append(box);
    fields.set(f.id, { field: f, box, input });
  }
}

function makeField(f, rcp, pageNo) {
  const box = el('div', { class: `field field-${f.type}${f.required ? ' required' : ''}`, 'data-field-id': f.id });
  const id = `field-${f.id}`;
  const name = `${FIELD_NAMES[f.type] ?? 'Field'}, page ${pageNo}${f.required ? ' (required)' : ''}`;
  let input;
  if (f.type === 'signature') {
    input = el('button', { type: 'button', id, class: 'sig-button', 'aria-label': `${name}: not signed yet` }, 'Sign here');
    input.addEventListener('click', () => openSignature());
  } else if (f.type === 'date_signed') {
    input = el('span', { id, class: 'date-value' }, el('span', { class: 'visually-hidden' }, 'Date signed: '), today());
  } else {
    const checkbox = f.type === 'checkbox';
    input = el('input', {
      id, type: checkbox ? 'checkbox' : f.type === 'email' ? 'email' : 'text',
      required: f.required, 'aria-required': f.required ? 'true' : undefined,
      autocomplete: { name: 'name', email: 'email' }[f.type] ?? 'off',
    });
    if (checkbox) input.checked = f.value === true;
    else input.value = typeof f.value === 'string' ? f.value : f.type === 'name' ? fullName(rcp) : f.type === 'email' ? rcp.email : '';
    input.addEventListener(checkbox ? 'change' : 'input', () => {
      input.removeAttribute('aria-invalid');
      updateProgress();
    });
    box.append(el('label', { for: id, class: checkbox ? 'checkbox-target' : 'visually-hidden' }, name));
  }
  box.append(input);
  return { box, input };
}

function layoutPage(page) {
  const scale = page.wrap.clientWidth / page.width;
  if (!scale) return;
  for (const box of page.layer.children) {
    const f = fields.get(box.dataset.fieldId)?.field;
    if (!f) continue;
    Object.assign(box.style, {
      left: `${f.x * scale}px`, top: `${f.y * scale}px`, width: `${f.width * scale}px`, height: `${f.height * scale}px`,
      fontSize: `${Math.max(10, Math.min(18, f.height * scale * 0.55))}px`,
    });
  }
}

const isFilled = ({ field: f, input }) =>
  f.type === 'checkbox' ? input.checked : TEXT_TYPES.has(f.type) ? input.value.trim() !== '' : f.type === 'signature' ? signature !== null : true;

function updateProgress() {
  const required = [...fields.values()].filter((x) => x.field.required);
  const done = required.filter(isFilled).length;
  $('progress').textContent = required.length ? `${done} of ${required.length} required done` : '';
}

// ---------------------------------------------------------------------------------------- Signature

const dialog = $('signature-dialog');
let mode = 'typed';

function setMode(next) {
  mode = next;
  $('mode-type').setAttribute('aria-pressed', String(next === 'typed'));
  $('mode-draw').setAttribute('aria-pressed', String(next === 'drawn'));
  $('type-panel').hidden = next !== 'typed';
  $('draw-panel').hidden = next !== 'drawn';
  showError('signature-error', '');
}

function openSignature() {
  const typed = $('typed-name');
  if (!typed.value) typed.value = signature?.kind === 'typed' ? signature.value : fullName(state.recipient);
  $('typed-preview').textContent = typed.value;
  setMode(signature?.kind === 'drawn' ? 'drawn' : 'typed');
  dialog.showModal();
  (mode === 'typed' ? typed : $('mode-draw')).focus();
}

$('mode-type').addEventListener('click', () => { setMode('typed'); $('typed-name').focus(); });
$('mode-draw').addEventListener('click', () => setMode('drawn'));
$('typed-name').addEventListener('input', (e) => { $('typed-preview').textContent = e.target.value; });
$('signature-cancel').addEventListener('click', () => dialog.close());
dialog.addEventListener('close', () => { signAfterAdopting = false; });

$('signature-form').addEventListener('submit', (event) => {
  event.preventDefault();
  let adopted;
  if (mode === 'typed') {
    const value = $('typed-name').value.trim();
    if (!value) return showError('signature-error', 'Type your name to sign.');
    adopted = { kind: 'typed', value };
  } else {
    if (!pad.hasInk) return showError('signature-error', 'Draw your signature in the box first.');
    const value = pad.canvas.toDataURL('image/png');
    if (value.length > MAX_DRAWN_BYTES) return showError('signature-error', 'The drawing is too detailed. Clear it and draw a simpler signature.');
    adopted = { kind: 'drawn', value };
  }
  signature = adopted;
  const continueSigning = signAfterAdopting;
  dialog.close();
  fillSignatureFields();
  const count = [...fields.values()].filter((x) => x.field.type === 'signature').length;
  announce(count ? `Signature adopted and placed in ${plural(count, 'field', 'fields')}.` : 'Signature adopted.', 'success');
  if (continueSigning) submitSign();
});

function fillSignatureFields() {
  for (const { field, input } of fields.values()) {
    if (field.type !== 'signature') continue;
    input.replaceChildren(
      signature.kind === 'typed'
        ? el('span', { class: 'typed-signature' }, signature.value)
        : el('img', { src: signature.value, alt: '' }),
    );
    input.classList.add('filled');
    input.setAttribute('aria-label', `${input.getAttribute('aria-label').split(':')[0]}: signed, select to change`);
    input.removeAttribute('aria-invalid');
  }
  updateProgress();
}

/** The drawing pad: pointer events cover mouse, touch and pen alike. */
const pad = (() => {
  const canvas = $('draw-pad');
  const ctx = canvas.getContext('2d');
  const self = { canvas, hasInk: false };
  let active = null; // the pointer drawing now
  let last = null;
  const point = (e) => {
    const r = canvas.getBoundingClientRect();
    return [((e.clientX - r.left) * canvas.width) / r.width, ((e.clientY - r.top) * canvas.height) / r.height];
  };
  Object.assign(ctx, { lineWidth: 3.5, lineCap: 'round', lineJoin: 'round', strokeStyle: '#14205a', fillStyle: '#14205a' });
  canvas.addEventListener('pointerdown', (e) => {
    if (active !== null || (e.pointerType === 'mouse' && e.button !== 0)) return;
    e.preventDefault();
    active = e.pointerId;
    canvas.setPointerCapture(e.pointerId);
    last = point(e);
    ctx.beginPath();
    ctx.arc(last[0], last[1], ctx.lineWidth / 2, 0, Math.PI * 2);
    ctx.fill();
    self.hasInk = true;
  });
  canvas.addEventListener('pointermove', (e) => {
    if (e.pointerId !== active) return;
    e.preventDefault();
    for (const ev of e.getCoalescedEvents?.() ?? [e]) {
      const p = point(ev);
      ctx.beginPath();
      ctx.moveTo(last[0], last[1]);
      ctx.lineTo(p[0], p[1]);
      ctx.stroke();
      last = p;
    }
  });
  const end = (e) => {
    if (e.pointerId === active) active = null;
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  $('draw-clear').addEventListener('click', () => {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    self.hasInk = false;
  });
  return self;
})();

// ---------------------------------------------------------------------------------- Sign or decline

function setBusy(on) {
  busy = on;
  $('sign').disabled = on;
  $('decline').disabled = on;
}

async function submitSign() {
  if (busy) return;
  const values = {};
  const missing = [];
  for (const entry of fields.values()) {
    const { field: f, input } = entry;
    if (f.type === 'checkbox') values[f.id] = input.checked;
    else if (TEXT_TYPES.has(f.type) && input.value.trim() !== '') values[f.id] = input.value.trim();
    if (f.required && f.type !== 'signature' && !isFilled(entry)) missing.push(input);
  }
  for (const input of missing) input.setAttribute('aria-invalid', 'true');
  if (missing.length) {
    announce(`Please complete ${plural(missing.length, 'required field', 'required fields')}, highlighted in red.`, 'error');
    missing[0].focus();
    return;
  }
  if (!signature) {
    signAfterAdopting = true;
    announce('Adopt your signature to finish signing.');
    openSignature();
    return;
  }
  setBusy(true);
  announce('Signing…');
  try {
    const body = await call('POST', '/sign', { values, signature });
    // The answer is the recorded state: only now may the host hear of it.
    emit('signer.signed');
    render(body, 'signed');
    awaitCompletion('signed').catch(() => {});
  } catch (e) {
    announce(e.message, 'error');
    if (e.status === 409) await call('GET').then((s) => render(s)).catch(() => {});
  } finally {
    setBusy(false);
  }
}

$('sign').addEventListener('click', () => submitSign());

const declineDialog = $('decline-dialog');
$('decline').addEventListener('click', () => {
  showError('decline-error', '');
  declineDialog.showModal();
  $('decline-reason').focus();
});
$('decline-cancel').addEventListener('click', () => declineDialog.close());

$('decline-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  if (busy) return;
  const reason = $('decline-reason').value.trim();
  if (!reason) {
    $('decline-reason').setAttribute('aria-invalid', 'true');
    return showError('decline-error', 'Tell the sender why you are declining.');
  }
  setBusy(true);
  try {
    const body = await call('POST', '/decline', { reason });
    emit('request.declined', { reason });
    declineDialog.close();
    render(body, 'declined');
  } catch (e) {
    showError('decline-error', e.message);
  } finally {
    setBusy(false);
  }
});

start();
