  // The element listed under `index` by observation `seq`, or why not.
  function resolve(seq, index) {
    if (seq !== sequence) return { error: 'stale', detail: `observation ${seq} was replaced by observation ${sequence}` };
    const el = listed[index];
    if (!el) return { error: 'unknown', detail: `observation ${seq} has no index ${index}` };
    if (!el.isConnected) return { error: 'gone', detail: `element ${index} (<${el.localName}>) is no longer in the page` };
    return { el };
  }

  // The box of an element in top-level viewport coordinates, across
  // same-origin frames.
  function topRect(el) {
    const r = el.getBoundingClientRect();
    let x = r.left, y = r.top;
    let win = el.ownerDocument.defaultView;
    while (win && win.frameElement) {
      const f = win.frameElement;
      const fr = f.getBoundingClientRect();
      const cs = getComputedStyle(f);
      x += fr.left + f.clientLeft + parseFloat(cs.paddingLeft || '0');
      y += fr.top + f.clientTop + parseFloat(cs.paddingTop || '0');
      win = f.ownerDocument.defaultView;
    }
    return { x, y, width: r.width, height: r.height };
  }

  // Installed as a document starts (Page.addScriptToEvaluateOnNewDocument):
  // once the DOM is parsed, take one unreported observation, so the style
  // and layout the first real one needs are done, and its code is warm,
  // while the page still waits for its images and scripts. Only in that
  // idle time: run before a load that is due anyway, it would hold the
  // load event back by as long as it takes (a table of 2,000 fields did
  // 60-100 ms), which is the very wait it is meant to hide; when the load
  // comes first, the first real observation does the work. The warm-up
  // leaves no trace: numbering and "new" marks start from the first
  // observation webagent asks for.
  if (document.readyState === 'loading' && window === window.top && typeof requestIdleCallback === 'function') {
    document.addEventListener('DOMContentLoaded', () => {
      const idle = requestIdleCallback(() => {
        if (document.readyState === 'complete') return;
        try { observe({}); } catch (_) { /* the real observation reports errors */ }
        sequence = 0;
        listed = [];
        previousIds = null;
      });
      addEventListener('load', () => cancelIdleCallback(idle), { once: true });
    }, { once: true });
  }

  // `a >>> b >>> c`: each hop but the last enters the document of the
  // <iframe> it matches (first visible match) or the open shadow root of
  // the element it matches. Returns { root, last } for the last part, or
  // { cross, prefix, rest } when a hop reaches a frame of another origin
  // (its element is kept for `hopped()`), or { error, detail }.
  let hoppedFrame = null;
  function pierce(selector) {
    const parts = selector.split('>>>').map((p) => p.trim());
    let root = document;
    for (let i = 0; i < parts.length - 1; i++) {
      let matches;
      try { matches = Array.from(root.querySelectorAll(parts[i])); }
      catch (e) { return { error: 'selector', detail: String(e.message || e) }; }
      if (!matches.length) return { error: 'missing', detail: `no element matches \`${parts[i]}\`` };
      const host = matches.find((m) => m.checkVisibility()) || matches[0];
      if (host.localName === 'iframe' || host.localName === 'frame') {
        let doc = null;
        try { doc = host.contentDocument; } catch (_) { doc = null; }
        if (!doc) {
          hoppedFrame = host;
          return { cross: true, prefix: parts.slice(0, i + 1).join(' >>> '), rest: parts.slice(i + 1).join(' >>> ') };
        }
        root = doc;
      } else if (host.shadowRoot) {
        root = host.shadowRoot;
      } else {
        return { error: 'selector', detail: `\`${parts[i]}\` matches a <${host.localName}> with neither a document nor an open shadow root to enter` };
      }
    }
    return { root, last: parts[parts.length - 1] };
  }

  globalThis.__webagentObserver = {
    observe: (opts) => observe(opts || {}),
    // The whole page's text as read_page gives it: what observations read,
    // plus the values of fields; {text, clipped, chars}.
    read: (limit) => observe({ read: true, textLimit: limit }),
    // Runs fn(element, args, helpers) on the element listed under index and
    // returns {ok, value} or {ok:false, error, detail} as a JSON string.
    call(seq, index, fn, args) {
      const found = resolve(seq, index);
      if (found.error) return JSON.stringify({ ok: false, error: found.error, detail: found.detail });
      const value = fn(found.el, args, { topRect, composedParent });
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    },
    // Runs fn(elements, args, helpers) on the elements a CSS selector
    // matches in the top document.
    callSelector(selector, fn, args) {
      const p = pierce(selector);
      if (p.error) return JSON.stringify({ ok: false, error: 'selector', detail: p.detail });
      if (p.cross) return JSON.stringify({ ok: false, error: 'selector', detail: `\`${p.prefix}\` is a frame of another origin; an action's selector reaches into it` });
      let matches;
      try { matches = Array.from(p.root.querySelectorAll(p.last)); }
      catch (e) { return JSON.stringify({ ok: false, error: 'selector', detail: String(e.message || e) }); }
      const value = fn(matches, args, { topRect, composedParent });
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    },
    sequence: () => sequence,
    pierce,
    // The <iframe> of another origin the last `pierce` stopped at.
    hopped: () => hoppedFrame,
    // The element itself (for the CDP calls that need a node handle).
    element(seq, index) {
      const found = resolve(seq, index);
      return found.el || null;
    },
  };
  return 'installed';
})()
