/**
 * @esig/embed: esig's signing page inside your own web page (docs/embedding.md). Create an embedded session
 * on your server (`POST /api/v1/signature-requests/{id}/recipients/{rid}/embedded-sessions` with your page's
 * origin), hand its `url` to the browser, and `mount()` it, or use `<esig-signing url="…">`.
 *
 * The client trusts a message only when it comes from its own frame's window and from the origin of `url`;
 * the frame sends its messages to your origin only. Treat `signer.signed` as a signal to refresh your UI;
 * confirm completion on your server (webhook or API) before acting on it.
 *
 * @packageDocumentation
 */

/** The state of the recipient as the frame last saw it (on `ready`). */
export type RecipientStatus = 'PENDING' | 'NOTIFIED' | 'OPENED' | 'VIEWED' | 'SIGNED' | 'DECLINED';

/** Why the embedded page cannot be used; `timeout` is raised by this client when no `ready` arrived. */
export type EsigErrorCode = 'session_used' | 'session_expired' | 'invalid_state' | 'network' | 'timeout';

interface Base<T extends string> {
  readonly esig: 1;
  readonly type: T;
  /** The request and recipient; null only on a `timeout` (no frame ever spoke). */
  readonly requestId: string | null;
  readonly recipientId: string | null;
  /** When the frame (or, for `timeout`, this client) sent it, ISO 8601. */
  readonly at: string;
}

/** Every message the frame sends (CONTRACT "Embedded signing"), by type. */
export interface EsigEventMap {
  /** The page is usable; `status` is the recipient's current status. Sent again after each `hello`. */
  ready: Base<'ready'> & { readonly status: RecipientStatus | string; readonly requestStatus?: string };
  /** The server recorded that the agreement was displayed. */
  'request.viewed': Base<'request.viewed'>;
  /** The server accepted the recipient's identification (access code or mailed code). */
  'signer.authenticated': Base<'signer.authenticated'>;
  /** The server recorded the signature. Confirm on your server before acting on it. */
  'signer.signed': Base<'signer.signed'>;
  /** The server recorded the recipient's refusal; the request is DECLINED. */
  'request.declined': Base<'request.declined'> & { readonly reason: string };
  /** Every signer has signed and the finished document exists (the request is COMPLETED). */
  'request.completed': Base<'request.completed'>;
  /** The page cannot be used, or this client gave up waiting (`timeout`). */
  error: Base<'error'> & { readonly code: EsigErrorCode | string; readonly message: string };
  /** The height of the page's content in CSS pixels, so the host can size the frame to fit. */
  resize: Base<'resize'> & { readonly height: number };
}

export type EsigEventType = keyof EsigEventMap;
export type EsigMessage = EsigEventMap[EsigEventType];
export type EsigListener<T extends EsigEventType> = (message: EsigEventMap[T]) => void;

export interface MountOptions {
  /** The session's `url`, as the API answered it. */
  readonly url: string;
  /** How long to wait for `ready` before reporting `error` `timeout` (a frame the browser refused). Default 30,000. */
  readonly timeoutMs?: number;
  /** Size the frame to the page's content on each `resize` (the host page then scrolls). Default false. */
  readonly autoResize?: boolean;
  /** The frame's accessible name. Default "Sign a document". */
  readonly title?: string;
}

export interface EsigEmbed {
  on<T extends EsigEventType>(type: T, fn: EsigListener<T>): void;
  off<T extends EsigEventType>(type: T, fn: EsigListener<T>): void;
  /** Removes the frame and every listener; nothing is emitted afterwards. */
  destroy(): void;
  readonly iframe: HTMLIFrameElement;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Puts the signing page of an embedded session into `container` (an iframe filling its width) and listens
 * to it.
 *
 * @example
 * const signing = EsigEmbed.mount(document.getElementById('sign')!, { url: session.url });
 * signing.on('signer.signed', () => refreshFromServer());
 * signing.on('error', (e) => showProblem(e.code));
 */
export function mount(container: Element, options: MountOptions): EsigEmbed {
  const src = new URL(options.url, document.baseURI);
  const origin = src.origin;
  const listeners = new Map<string, Set<(m: EsigMessage) => void>>();
  const iframe = document.createElement('iframe');
  let alive = true;
  let heard = false;

  const emit = (m: EsigMessage) => {
    for (const fn of [...(listeners.get(m.type) ?? [])]) fn(m);
  };

  const onMessage = (event: MessageEvent) => {
    // Only our own frame, and only from the session's origin: anything else may be forged.
    if (!alive || event.source !== iframe.contentWindow || event.origin !== origin) return;
    const m = event.data as EsigMessage | null;
    if (m === null || typeof m !== 'object' || m.esig !== 1 || typeof m.type !== 'string') return;
    if (!heard) {
      heard = true;
      clearTimeout(timer);
    }
    if (m.type === 'resize' && options.autoResize && typeof m.height === 'number' && m.height > 0) iframe.style.height = `${Math.ceil(m.height)}px`;
    emit(m);
  };

  const timer = setTimeout(() => {
    if (!alive || heard) return;
    emit({
      esig: 1,
      type: 'error',
      code: 'timeout',
      message: `The signing page did not answer within ${options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms (blocked by the browser, wrong origin, or offline).`,
      requestId: null,
      recipientId: null,
      at: new Date().toISOString(),
    });
  }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);

  window.addEventListener('message', onMessage);
  iframe.src = src.href;
  iframe.title = options.title ?? 'Sign a document';
  iframe.referrerPolicy = 'no-referrer';
  iframe.setAttribute('style', 'display:block;width:100%;height:100%;min-height:480px;border:0');
  container.appendChild(iframe);

  return {
    iframe,
    on: (type, fn) => {
      const set = listeners.get(type) ?? new Set();
      set.add(fn as (m: EsigMessage) => void);
      listeners.set(type, set);
    },
    off: (type, fn) => void listeners.get(type)?.delete(fn as (m: EsigMessage) => void),
    destroy: () => {
      if (!alive) return;
      alive = false;
      clearTimeout(timer);
      window.removeEventListener('message', onMessage);
      listeners.clear();
      iframe.remove();
    },
  };
}

const TYPES: readonly EsigEventType[] = ['ready', 'request.viewed', 'signer.authenticated', 'signer.signed', 'request.declined', 'request.completed', 'error', 'resize'];

/**
 * Defines `<esig-signing url="…" timeout-ms="…" auto-resize>` (once; a no-op outside browsers). It mounts
 * the session when connected, dispatches each message as a bubbling `CustomEvent` named `esig:<type>` with
 * the message as `detail`, and destroys the frame when disconnected or when `url` changes.
 */
export function defineElement(name = 'esig-signing'): void {
  if (typeof customElements === 'undefined' || customElements.get(name)) return;
  class EsigSigning extends HTMLElement {
    static get observedAttributes() {
      return ['url'];
    }
    private embed: EsigEmbed | null = null;

    connectedCallback() {
      if (this.embed === null) this.start();
    }
    disconnectedCallback() {
      this.embed?.destroy();
      this.embed = null;
    }
    // Also called for the initial `url` on upgrade, before connectedCallback: only a change of a mounted
    // element's url remounts (a session opens once, so a second mount of the same url would find it used).
    attributeChangedCallback(_name: string, oldValue: string | null, newValue: string | null) {
      if (this.embed !== null && oldValue !== newValue) this.start();
    }
    /** The mounted session, while connected. */
    get signing(): EsigEmbed | null {
      return this.embed;
    }

    private start() {
      this.embed?.destroy();
      this.embed = null;
      const url = this.getAttribute('url');
      if (!url) return;
      const timeout = Number(this.getAttribute('timeout-ms'));
      const embed = mount(this, {
        url,
        timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
        autoResize: this.hasAttribute('auto-resize'),
        title: this.getAttribute('title') ?? undefined,
      });
      for (const type of TYPES) embed.on(type, (m) => this.dispatchEvent(new CustomEvent(`esig:${type}`, { detail: m, bubbles: true, composed: true })));
      this.embed = embed;
    }
  }
  customElements.define(name, EsigSigning);
}

defineElement();
