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
  const original = EventTarget.prototype.addEventListener;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const patched = {
    addEventListener(type, listener, options) {
      if (this && this.nodeType === 1 && CLICKY.has(type) && !marked.has(this)) {
        marked.add(this);
        refs.push(new WeakRef(this));
      }
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
