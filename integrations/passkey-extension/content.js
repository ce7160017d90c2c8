/*
 * The content script, on https://web.whatsapp.com (top frame), in the extension's isolated world.
 *
 * It asks the service worker for the device's pending passkey request (the gateway's
 * GET /connect/passkey: the WebAuthn request options WhatsApp sent the gateway), and while one
 * waits it shows a small panel of its own. "Use passkey" makes the assertion here — WebAuthn
 * needs a whatsapp.com page, since the passkey's relying party is whatsapp.com — and hands
 * `credential.toJSON()` to the service worker, which posts it to the gateway. Then it shows the
 * code the phone shows, with a button to confirm it.
 *
 * What it does not do: read, watch or change anything of WhatsApp Web's page (it only appends its
 * own element, whose contents live in a closed shadow root), see the device token (the service
 * worker holds it), load any code, or talk to anything but the service worker.
 */
(() => {
  'use strict';

  const RP_ID = 'whatsapp.com';
  /*
   * How often the page asks the gateway, within the token's status rate limit (RATE_LIMIT_STATUS,
   * 20 a minute by default): with no request, every 10 s; while one waits, every 6 s; for the first
   * 15 s of a step where WhatsApp or the phone is at work (verifying, finishing), every 2 s.
   */
  const IDLE_POLL_MS = 10_000;
  const WAITING_POLL_MS = 6000;
  const BUSY_POLL_MS = 2000;
  const BUSY_FOR_MS = 15_000;
  /** An ended request's last words stay this long. */
  const ENDED_SHOWN_MS = 30_000;

  /** The panel's state: the request as last read, what the operator is doing, the last note. */
  const state = {
    /** The pending request (`GET /connect/passkey`'s data), or undefined. */
    passkey: undefined,
    /** The gateway's origin, as the service worker names it. */
    gateway: '',
    /** A WebAuthn ceremony or a post is running. */
    busy: false,
    /** `{ kind: 'error' | 'info' | 'success', text }` under the panel's body. */
    note: undefined,
    /** The request ended while shown: the panel says so for a while. */
    ended: undefined,
    /** Hidden by the operator until the step changes. */
    hiddenStep: undefined,
    /** When the request's current step began (as this page saw it). */
    stepSince: 0,
  };

  // --- talking to the service worker ---------------------------------------------------------

  const ask = (message) =>
    chrome.runtime
      .sendMessage(message)
      .catch(() => ({ status: 0, error: 'The extension was reloaded or updated: reload this page.' }));

  // --- WebAuthn: the request's options in, the assertion's JSON out ----------------------------

  const toBase64url = (buffer) => {
    const bytes = new Uint8Array(buffer);
    let binary = '';
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };

  const fromBase64url = (text) => {
    if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url');
    const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  };

  /**
   * `PublicKeyCredentialRequestOptions` from the request's JSON: its challenge, rpId (which must be
   * whatsapp.com), allowed credentials, user verification and timeout (never past its expiry).
   */
  function requestOptions(json, expiresAt) {
    if (!json || json.rpId !== RP_ID) throw new Error(`the request is not for ${RP_ID}`);
    const left = Date.parse(expiresAt) - Date.now();
    if (!(left > 0)) throw new Error('the request has expired');
    const allowed = Array.isArray(json.allowCredentials) ? json.allowCredentials : [];
    return {
      challenge: fromBase64url(json.challenge),
      rpId: RP_ID,
      allowCredentials: allowed.map((c) => ({
        type: 'public-key',
        id: fromBase64url(c.id),
        ...(Array.isArray(c.transports)
          ? { transports: c.transports.filter((t) => typeof t === 'string') }
          : {}),
      })),
      userVerification: typeof json.userVerification === 'string' ? json.userVerification : 'required',
      timeout: Math.min(typeof json.timeout === 'number' && json.timeout > 0 ? json.timeout : left, left),
    };
  }

  /** `credential.toJSON()`, or the same built by hand where the browser lacks it (before Chrome 129). */
  function credentialJSON(credential) {
    if (typeof credential.toJSON === 'function') return credential.toJSON();
    const r = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment ?? null,
      response: {
        clientDataJSON: toBase64url(r.clientDataJSON),
        authenticatorData: toBase64url(r.authenticatorData),
        signature: toBase64url(r.signature),
        userHandle: r.userHandle ? toBase64url(r.userHandle) : null,
      },
      clientExtensionResults: {},
    };
  }

  // --- what the gateway's answers mean, in plain words -----------------------------------------

  function failureText(answer, what) {
    if (answer.status === 0) return answer.error ?? 'The gateway cannot be reached.';
    if (answer.status === 422)
      return 'WhatsApp refused the passkey: this link attempt ended. Start a new link on the gateway.';
    if (answer.status === 404)
      return 'No passkey request waits any more: it expired or the link was cancelled.';
    if (answer.status === 409) return `The link is at another step (${answer.step ?? 'unknown'}).`;
    if (answer.status === 400)
      return `The gateway did not take ${what}: ${(answer.details ?? []).join('; ') || answer.error}`;
    if (answer.status === 401 || answer.status === 403)
      return 'The gateway refused the device token: check the extension’s settings.';
    if (answer.status === 429) return `Too many requests: trying again in ${answer.resetIn ?? 60} s.`;
    return `The gateway could not pass ${what} on (HTTP ${answer.status}). Try again.`;
  }

  const webauthnText = (err) =>
    err && err.name === 'NotAllowedError'
      ? 'No assertion was made (cancelled, timed out, or no passkey for whatsapp.com here). Try again, or use the phone: see the extension’s README.'
      : `The browser could not make the assertion: ${err && err.message ? err.message : err}`;

  // --- the operator's actions --------------------------------------------------------------------

  async function usePasskey() {
    const passkey = state.passkey;
    if (state.busy || passkey?.step !== 'assertion') return;
    state.busy = true;
    state.note = { kind: 'info', text: 'Your browser asks for the passkey…' };
    render();
    try {
      let credential;
      try {
        const publicKey = requestOptions(passkey.requestOptions, passkey.expiresAt);
        credential = await navigator.credentials.get({ publicKey });
      } catch (err) {
        state.note = { kind: 'error', text: webauthnText(err) };
        return;
      }
      if (!credential) {
        state.note = { kind: 'error', text: 'No assertion was made. Try again.' };
        return;
      }
      state.note = { kind: 'info', text: 'Sending the assertion to the gateway…' };
      render();
      const answer = await ask({ kind: 'assert', assertion: credentialJSON(credential) });
      if (answer.status === 202) {
        state.note = undefined;
        if (answer.passkey) setPasskey(answer.passkey);
      } else
        state.note = {
          kind: 'error',
          text: failureText(answer, 'the assertion'),
          // WhatsApp's refusal ends the attempt: these words stay once the request is gone.
          final: answer.status === 422,
        };
    } finally {
      state.busy = false;
      render();
      schedule(0);
    }
  }

  async function confirmCode() {
    const passkey = state.passkey;
    if (state.busy || passkey?.step !== 'confirm_code' || !passkey.code) return;
    state.busy = true;
    state.note = { kind: 'info', text: 'Confirming…' };
    render();
    try {
      const answer = await ask({ kind: 'confirm', code: passkey.code });
      if (answer.status === 202) {
        state.note = undefined;
        if (answer.passkey) setPasskey(answer.passkey);
      } else state.note = { kind: 'error', text: failureText(answer, 'the confirmation') };
    } finally {
      state.busy = false;
      render();
      schedule(0);
    }
  }

  // --- following the request -----------------------------------------------------------------------

  let timer;
  function schedule(ms) {
    clearTimeout(timer);
    if (document.visibilityState !== 'visible') return;
    timer = setTimeout(() => void poll(), ms);
  }

  function nextPoll() {
    const step = state.passkey?.step;
    const busy = step === 'verifying' || step === 'finishing';
    if (busy && Date.now() - state.stepSince < BUSY_FOR_MS) return BUSY_POLL_MS;
    return step ? WAITING_POLL_MS : IDLE_POLL_MS;
  }

  /** Why a link ended, in the panel's words, by the gateway's disconnect reason. */
  const ENDED_WORDS = {
    passkey_rejected:
      'WhatsApp refused the passkey: this link attempt ended. Start a new link on the gateway.',
    passkey_expired:
      'The passkey request ended: it expired before it was answered. Start a new link on the gateway.',
    passkey_no_continuation:
      'The passkey request ended: WhatsApp never answered the passkey. Start a new link on the gateway.',
  };

  /** The words for why the request shown ended, when the gateway's status says (else undefined). */
  async function endedWhy() {
    const answer = await ask({ kind: 'ended' });
    return ENDED_WORDS[answer?.reason];
  }

  /** The request as the gateway now answers it (a new step restarts its clock). */
  function setPasskey(passkey) {
    if (passkey?.step !== state.passkey?.step) state.stepSince = Date.now();
    state.passkey = passkey;
  }

  async function poll() {
    if (state.busy) return schedule(nextPoll());
    const answer = await ask({ kind: 'pending' });
    if (state.busy) return schedule(nextPoll());
    const before = state.passkey;
    if (!answer.configured) {
      setPasskey(undefined);
    } else if (answer.status === 200 && answer.passkey) {
      state.gateway = answer.gateway ?? '';
      if (before?.step !== answer.passkey.step) state.note = undefined;
      setPasskey(answer.passkey);
      state.ended = undefined;
    } else if (answer.status === 404) {
      setPasskey(undefined);
      // WhatsApp may refuse (or never answer) after the assertion was taken: the request then
      // ends between two polls, and the gateway's status names why.
      const why = before && !state.note?.final && before.step !== 'finishing' ? await endedWhy() : undefined;
      if (before)
        state.ended = state.note?.final
          ? state.note
          : why
            ? { kind: 'error', text: why }
            : before.step === 'finishing'
              ? {
                  kind: 'success',
                  text: 'The passkey steps are done. The gateway’s status says whether the device is linked.',
                }
              : {
                  kind: 'error',
                  text: 'The passkey request ended (it expired, WhatsApp refused it, or the link was cancelled). The gateway’s status says why; start a new link there.',
                };
      const ended = state.ended;
      if (ended)
        setTimeout(() => {
          if (state.ended !== ended) return;
          state.ended = undefined;
          render();
        }, ENDED_SHOWN_MS);
    } else if (before) {
      // A request shown stays shown while the gateway cannot be asked; the note says why.
      state.note = { kind: 'error', text: failureText(answer, 'the request') };
    }
    render();
    schedule(answer.status === 429 ? Math.max(1, answer.resetIn ?? 60) * 1000 : nextPoll());
  }

  document.addEventListener('visibilitychange', () => schedule(0));

  // --- the panel (its own element; a closed shadow root keeps the page out of it) ------------

  const CSS = `
    :host { all: initial; position: fixed; z-index: 2147483647; right: 16px; bottom: 16px; }
    .panel { box-sizing: border-box; width: min(360px, calc(100vw - 32px)); max-height: calc(100vh - 32px);
      overflow: auto; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
      color: #1d2a33; background: #fff; border: 1px solid #c9d3da; border-radius: 10px;
      box-shadow: 0 8px 28px rgba(0, 0, 0, 0.22); padding: 14px 16px; }
    header { display: flex; align-items: center; gap: 8px; margin-bottom: 6px; }
    header strong { flex: 1; font-size: 12px; letter-spacing: .02em; color: #0b6b59; text-transform: uppercase; }
    h2 { font-size: 16px; margin: 0 0 6px; }
    p { margin: 0 0 8px; }
    .muted { color: #52616b; font-size: 13px; }
    .code { display: block; font: 700 28px/1.2 ui-monospace, Menlo, Consolas, monospace; letter-spacing: .08em;
      text-align: center; padding: 8px; margin: 4px 0 10px; background: #eef6f3; border-radius: 8px; }
    button { font: inherit; border-radius: 8px; padding: 8px 12px; cursor: pointer; border: 1px solid #0b6b59; }
    button.primary { background: #0b6b59; color: #fff; width: 100%; font-weight: 600; }
    button.primary[aria-disabled="true"] { opacity: .6; cursor: progress; }
    button.close { background: transparent; border: 0; color: #52616b; padding: 2px 6px; font-size: 18px; line-height: 1; }
    button:focus-visible { outline: 3px solid #1f7aec; outline-offset: 2px; }
    .note { margin: 10px 0 0; padding: 8px 10px; border-radius: 8px; font-size: 13px; }
    .note.error { background: #fdecea; color: #8a1c12; }
    .note.info { background: #eaf2fd; color: #18457a; }
    .note.success { background: #e6f4ea; color: #1e5b2f; }
  `;

  let host;
  let shadow;
  function mount() {
    if (!host) {
      host = document.createElement('mgw-passkey-link');
      shadow = host.attachShadow({ mode: 'closed' });
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      shadow.adoptedStyleSheets = [sheet];
    }
    if (!host.isConnected) document.documentElement.append(host);
  }

  /** An element with attributes and children (strings become text: nothing is parsed as HTML). */
  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'onClick')
        e.addEventListener('click', (ev) => {
          // Only the operator's own clicks: a script of the page cannot press these buttons.
          if (ev.isTrusted) v();
        });
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== undefined && c !== null) e.append(c);
    return e;
  }

  const left = (expiresAt) => {
    const s = Math.max(0, Math.round((Date.parse(expiresAt) - Date.now()) / 1000));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  };

  function body(passkey) {
    const gateway = state.gateway ? new URL(state.gateway).host : 'your gateway';
    switch (passkey.step) {
      case 'assertion':
        return [
          el('h2', {}, 'The link waits for the passkey'),
          el(
            'p',
            {},
            `${gateway} is linking a device to this WhatsApp account, and WhatsApp asks for the account’s passkey. Expires in `,
            el('span', { 'data-countdown': passkey.expiresAt }, left(passkey.expiresAt)),
            '.',
          ),
          el(
            'button',
            {
              class: 'primary',
              type: 'button',
              'data-action': 'use',
              'aria-disabled': String(state.busy),
              onClick: usePasskey,
            },
            state.busy ? 'Waiting for the passkey…' : 'Use passkey',
          ),
          el(
            'p',
            { class: 'muted' },
            'Your browser asks for the passkey: this computer’s screen lock, a security key, or your phone (it shows a QR to scan).',
          ),
        ];
      case 'verifying':
        return [
          el('h2', {}, 'Verifying the passkey…'),
          el('p', {}, 'WhatsApp checks it; the phone answers next.'),
        ];
      case 'confirm_code':
        return [
          el('h2', {}, 'Compare the codes'),
          el('p', {}, 'The phone shows a code. Is it this one?'),
          el('output', { class: 'code', 'aria-label': 'Code' }, passkey.code ?? '…'),
          el(
            'button',
            {
              class: 'primary',
              type: 'button',
              'data-action': 'confirm',
              'aria-disabled': String(state.busy),
              onClick: confirmCode,
            },
            state.busy ? 'Confirming…' : 'Confirm: the codes match',
          ),
          el(
            'p',
            { class: 'muted' },
            'Confirm it on the phone too. If the codes differ, confirm nothing and start a new link. Expires in ',
            el('span', { 'data-countdown': passkey.expiresAt }, left(passkey.expiresAt)),
            '.',
          ),
        ];
      case 'finishing':
        return [
          el('h2', {}, 'Finishing the link…'),
          el('p', {}, 'The phone completes it once it is confirmed there too.'),
        ];
      default:
        return [el('h2', {}, `Passkey step: ${passkey.step}`)];
    }
  }

  function render() {
    const passkey = state.passkey;
    const shown = passkey ? state.hiddenStep !== passkey.step : !!state.ended;
    if (!shown) {
      host?.remove();
      return;
    }
    mount();
    const note = passkey ? state.note : state.ended;
    const panel = el(
      'section',
      { class: 'panel', role: 'region', 'aria-label': 'Messenger Gateway passkey link' },
      el(
        'header',
        {},
        el('strong', {}, 'Messenger Gateway'),
        el(
          'button',
          {
            class: 'close',
            type: 'button',
            'data-action': 'hide',
            'aria-label': 'Hide',
            title: 'Hide until the next step',
            onClick: () => {
              if (state.passkey) state.hiddenStep = state.passkey.step;
              else state.ended = undefined;
              render();
            },
          },
          '×',
        ),
      ),
      ...(passkey ? body(passkey) : []),
      note
        ? el('p', { class: `note ${note.kind}`, role: note.kind === 'error' ? 'alert' : 'status' }, note.text)
        : undefined,
    );
    const focused = shadow.activeElement?.getAttribute('data-action');
    shadow.replaceChildren(panel);
    // A re-render keeps the keyboard's place on the same button.
    if (focused) shadow.querySelector(`button[data-action="${focused}"]`)?.focus();
  }

  // The countdowns tick without re-rendering (a re-render would take the focus away).
  setInterval(() => {
    if (!shadow) return;
    for (const span of shadow.querySelectorAll('[data-countdown]'))
      span.textContent = left(span.getAttribute('data-countdown'));
  }, 1000);

  schedule(0);
})();
