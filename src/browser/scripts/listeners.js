// Installed in the page's own (main) world before its scripts run, in every
// frame. DevTools' getEventListeners only reports listeners of the world it
// runs in, so the isolated observer cannot see the page's click handlers
// itself. This hook remembers elements that got a click-like listener and,
// when the observer asks (a `webagent:listeners?` event on the document),
// answers with one `webagent:listener!` event per such element: events are
// the one channel both worlds see, and they carry the element itself.
(() => {
  const flag = '__webagentListenerHook';
  if (window[flag]) return;
  Object.defineProperty(window, flag, { value: true });
  const CLICKY = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart']);
  const marked = new WeakSet();
  let refs = [];
  // Whether the page reads keys where keys go when nothing has focus (the
  // window, the document, its root or body): a terminal drawn with divs
  // that takes what is typed after it was clicked.
  const KEYS = new Set(['keydown', 'keypress', 'keyup']);
  const onDocument = (target) => target === window || (target && (target.nodeType === 9 ||
    (target.nodeType === 1 && (target.localName === 'html' || target.localName === 'body'))));
  let documentKeys = false;
  const original = EventTarget.prototype.addEventListener;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const patched = {
    addEventListener(type, listener, options) {
      if (this && this.nodeType === 1 && CLICKY.has(type) && !marked.has(this)) {
        marked.add(this);
        refs.push(new WeakRef(this));
      }
      if (KEYS.has(type) && listener && onDocument(this)) documentKeys = true;
      return original.call(this, type, listener, options);
    },
  }.addEventListener;
  EventTarget.prototype.addEventListener = patched;
  // `el.onclick = fn` sets a handler without addEventListener.
  for (const name of ['onclick', 'onmousedown', 'onpointerdown']) {
    const desc = Object.getOwnPropertyDescriptor(HTMLElement.prototype, name);
    if (!desc || !desc.set) continue;
    Object.defineProperty(HTMLElement.prototype, name, {
      ...desc,
      set(value) {
        if (value && !marked.has(this)) {
          marked.add(this);
          refs.push(new WeakRef(this));
        }
        return desc.set.call(this, value);
      },
    });
  }
  // Timers that input started. Menus, tooltips and suggestions often open
  // a few hundred milliseconds after the hover, key or focus that asked for
  // them; webagent's settling waits for exactly these timers (asking with a
  // `webagent:timers?` event, answered by `webagent:timers-busy`) instead
  // of sleeping after every action. A timer counts when it is set within
  // 100 ms of an input event, or by such a timer's callback (one level, so
  // a polling loop cannot keep a page busy), and is due within 1.5 s.
  const INPUT_EVENTS = ['mouseover', 'mousedown', 'mouseup', 'click', 'pointerdown', 'pointerup',
    'keydown', 'keyup', 'input', 'change', 'focusin', 'dragenter', 'dragover', 'drop'];
  let lastInput = -1e9;
  const noteInput = () => { lastInput = performance.now(); };
  for (const type of INPUT_EVENTS) original.call(window, type, noteInput, { capture: true, passive: true });
  const pending = new Map();  // timer id -> due time
  let depth = 0;               // > 0 while a counted timer's callback runs
  // Timers of at most SOON ms not yet run, whoever set them: work the page
  // has queued for right after its load (see `busy` below).
  const SOON = 50;
  const soon = new Set();
  const nativeSetTimeout = window.setTimeout;
  const nativeClearTimeout = window.clearTimeout;
  window.setTimeout = function setTimeout(fn, delay, ...rest) {
    const ms = Number(delay) || 0;
    const counted = typeof fn === 'function' && ms <= 1500 &&
      (depth === 1 || (depth === 0 && performance.now() - lastInput < 100));
    const short = typeof fn === 'function' && ms <= SOON;
    if (!counted && !short) return nativeSetTimeout.call(this, fn, delay, ...rest);
    const level = depth + 1;
    let id = 0;
    const run = function (...args) {
      pending.delete(id);
      soon.delete(id);
      if (!counted) return fn.apply(this, args);
      const outer = depth;
      depth = level;
      try { return fn.apply(this, args); } finally { depth = outer; }
    };
    id = nativeSetTimeout.call(this, run, delay, ...rest);
    if (counted) pending.set(id, performance.now() + ms);
    if (short) soon.add(id);
    return id;
  };
  window.clearTimeout = function clearTimeout(id) {
    pending.delete(id);
    soon.delete(id);
    return nativeClearTimeout.call(this, id);
  };
  // Animation frames likewise: a script that animates a panel by hand
  // asks for a frame, changes the layout, and asks for the next one until
  // it is done. A chain of frames counts when its first frame was asked
  // for within 100 ms of an input event (or by a counted timer), for at
  // most 1.5 s from then, so a loop that never ends (a game, a canvas)
  // holds nobody for long, and a loop the page runs anyway never counts.
  const nativeFrame = window.requestAnimationFrame;
  const nativeCancelFrame = window.cancelAnimationFrame;
  const frames = new Map();  // frame id -> when its chain began
  const anyFrames = new Set();  // every frame callback not yet run
  let chain;                 // the running callback's chain start; null: uncounted; undefined: none runs
  window.requestAnimationFrame = function requestAnimationFrame(fn) {
    if (typeof fn !== 'function') return nativeFrame.call(this, fn);
    let began = null;
    if (chain !== undefined) began = chain;
    else if (depth > 0 || performance.now() - lastInput < 100) began = performance.now();
    let id = 0;
    id = nativeFrame.call(this, function (time) {
      frames.delete(id);
      anyFrames.delete(id);
      const outer = chain;
      chain = began;
      try { return fn.call(this, time); } finally { chain = outer; }
    });
    if (began !== null) frames.set(id, began);
    anyFrames.add(id);
    return id;
  };
  window.cancelAnimationFrame = function cancelAnimationFrame(id) {
    frames.delete(id);
    anyFrames.delete(id);
    return nativeCancelFrame.call(this, id);
  };
  const framesPending = () => {
    const now = performance.now();
    for (const began of frames.values()) if (now - began < 1500) return true;
    return false;
  };
  original.call(document, 'webagent:timers?', () => {
    if (pending.size || framesPending()) dispatch.call(document, new Event('webagent:timers-busy'));
  });
  // Other ways a page queues work for right after its load: messages to
  // itself (a MessageChannel is how React's scheduler renders, a
  // window.postMessage how setImmediate shims do), idle callbacks and
  // scheduled tasks. A message counts from its post until the next
  // message is delivered, for at most a second.
  let posted = -1e9, delivered = -1e9;
  const noteDelivered = () => { delivered = performance.now(); };
  const portPost = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function postMessage(...args) {
    posted = performance.now();
    return portPost.apply(this, args);
  };
  const portHandler = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
  if (portHandler && portHandler.set) {
    Object.defineProperty(MessagePort.prototype, 'onmessage', {
      ...portHandler,
      set(fn) {
        const wrapped = typeof fn === 'function'
          ? function (...args) { noteDelivered(); return fn.apply(this, args); } : fn;
        return portHandler.set.call(this, wrapped);
      },
    });
  }
  const windowPost = window.postMessage;
  window.postMessage = function postMessage(...args) {
    posted = performance.now();
    return windowPost.apply(this, args);
  };
  original.call(window, 'message', noteDelivered, true);
  const idle = new Set();
  if (typeof window.requestIdleCallback === 'function') {
    const nativeIdle = window.requestIdleCallback;
    const nativeCancelIdle = window.cancelIdleCallback;
    window.requestIdleCallback = function requestIdleCallback(fn, ...rest) {
      if (typeof fn !== 'function') return nativeIdle.call(this, fn, ...rest);
      let id = 0;
      id = nativeIdle.call(this, function (...args) { idle.delete(id); return fn.apply(this, args); }, ...rest);
      idle.add(id);
      return id;
    };
    window.cancelIdleCallback = function cancelIdleCallback(id) {
      idle.delete(id);
      return nativeCancelIdle.call(this, id);
    };
  }
  let tasks = 0;
  const sched = window.scheduler;
  if (sched && typeof sched.postTask === 'function') {
    const nativePost = sched.postTask;
    sched.postTask = function postTask(...args) {
      const p = nativePost.apply(this, args);
      tasks += 1;
      const done = () => { tasks -= 1; };
      p.then(done, done);
      return p;
    };
  }
  const messageWaiting = () => posted > delivered && performance.now() - posted < 1000;
  // Asked once a document has loaded: has the page queued work that may
  // still change it (any animation frame, a timer due within SOON ms, a
  // message to itself, an idle callback or task)? Always answers.
  original.call(document, 'webagent:busy?', () => {
    const busy = soon.size > 0 || anyFrames.size > 0 || messageWaiting() || idle.size > 0 || tasks > 0;
    dispatch.call(document, new Event(busy ? 'webagent:busy!' : 'webagent:idle!'));
  });
  // A page that closes its window (a popup done with its lookup, or one
  // its opener closes): settling after an action waits for the tab to go
  // instead of ending just before. Chromium lets a script close a window
  // only when a page opened it or it has no history to go back to.
  let closing = false;
  const nativeClose = window.close;
  window.close = function close(...args) {
    closing = closing || window.opener !== null || history.length <= 1;
    return nativeClose.apply(this, args);
  };
  original.call(document, 'webagent:closing?', () => {
    if (closing) dispatch.call(document, new Event('webagent:closing!'));
  });
  // Answers `webagent:keys!` when keys typed with nothing focused reach a
  // listener of the page's: added with addEventListener, or set as an
  // `onkeydown` handler (a property or an attribute of the body).
  original.call(document, 'webagent:keys?', () => {
    const handlers = [window, document, document.documentElement, document.body];
    const handled = handlers.some((t) => t && ['onkeydown', 'onkeypress', 'onkeyup'].some((h) => typeof t[h] === 'function'));
    if (documentKeys || handled) dispatch.call(document, new Event('webagent:keys!'));
  });
  original.call(document, 'webagent:listeners?', () => {
    const alive = [];
    for (const ref of refs) {
      const el = ref.deref();
      if (!el) continue;
      alive.push(ref);
      if (el.isConnected) dispatch.call(el, new Event('webagent:listener!', { composed: true }));
    }
    refs = alive;
  });
})();
