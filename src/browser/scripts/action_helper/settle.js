  // ---- settling and waiting ----

  // Late UI: timers the page set in answer to input (reported by the hook
  // in the page's world, listeners.js) and CSS transitions still running.
  let timersBusy = false;
  document.addEventListener('webagent:timers-busy', () => { timersBusy = true; }, true);
  const inputTimersPending = () => {
    timersBusy = false;
    document.dispatchEvent(new Event('webagent:timers?'));
    return timersBusy;
  };
  // Whether the page asked to close its window (the hook in the page's
  // world remembers `window.close()`, listeners.js): its tab is about to go.
  let closingSeen = false;
  document.addEventListener('webagent:closing!', () => { closingSeen = true; }, true);
  const closingAsked = () => {
    closingSeen = false;
    document.dispatchEvent(new Event('webagent:closing?'));
    return closingSeen;
  };
  const transitions = new Map();  // element -> properties in transition
  const transitionKey = (e) => e.composedPath()[0];
  // Only transitions that reveal or move things count; colour changes on
  // hover are cosmetic and must not slow every click down.
  const REVEALING = /^(opacity|visibility|transform|translate|scale|height|max-height|width|max-width|top|left|right|bottom|clip-path|display)$/;
  addEventListener('transitionrun', (e) => {
    if (!REVEALING.test(e.propertyName)) return;
    const el = transitionKey(e);
    transitions.set(el, (transitions.get(el) || 0) + 1);
  }, true);
  const transitionDone = (e) => {
    if (!REVEALING.test(e.propertyName)) return;
    const el = transitionKey(e);
    const n = (transitions.get(el) || 0) - 1;
    if (n > 0) transitions.set(el, n); else transitions.delete(el);
  };
  addEventListener('transitionend', transitionDone, true);
  addEventListener('transitioncancel', transitionDone, true);
  const transitionsRunning = () => {
    for (const el of transitions.keys()) if (!el.isConnected) transitions.delete(el);
    return transitions.size > 0;
  };

  // When the document's load event fired and when the DOM last changed in
  // the moments after it (the helper goes into each new document as it
  // starts, so it sees both).
  let loadedAt = null, changedAt = -Infinity, paintedAt = null;
  // Whether the document was first rendered (style, layout and paint
  // properties all done once); Chromium often draws a frame before the
  // load when the parser pauses. Listening schedules no frame, as asking
  // for an animation frame would.
  let revealed = document.readyState !== 'loading';
  addEventListener('pagereveal', () => { revealed = true; }, { once: true });
  // How long after the load the DOM's changes are watched.
  const CHANGE_WATCH_MS = 5000;
  if (document.readyState !== 'complete') {
    addEventListener('load', () => {
      loadedAt = performance.now();
      // The first frame after the load, once it is painted: what a person
      // first sees of the page.
      requestAnimationFrame(() => setTimeout(() => { paintedAt = performance.now(); }, 0));
      const watch = new MutationObserver(() => { changedAt = performance.now(); });
      watch.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      // Only settling right after the navigation asks.
      setTimeout(() => watch.disconnect(), CHANGE_WATCH_MS);
    }, { once: true });
  }

  // The first look at a new document. Settling after a navigation asks
  // the page once its load is answered, and by then Chromium has begun the
  // first frame (60-130 ms of the page's thread on a table of 2,000
  // fields), so the observation after it waits for the frame too. Instead
  // an evaluation sent while the document loads waits here until
  // `pageshow`, which fires after every load listener in the same task,
  // and when the page is done by then (nothing changed since the load, no
  // work queued in the main world's hook, no revealing animation running,
  // no font loading) it takes the observation in that task, before the
  // frame. Otherwise settling goes on as before.
  let pageShown = document.readyState === 'complete';
  const lookers = [];
  let hookIdle = false, hookAnswered = false;
  document.addEventListener('webagent:idle!', () => { hookAnswered = true; hookIdle = true; }, true);
  document.addEventListener('webagent:busy!', () => { hookAnswered = true; hookIdle = false; }, true);
  const pageIdle = () => {
    hookAnswered = false;
    document.dispatchEvent(new Event('webagent:busy?'));
    return hookAnswered && hookIdle;
  };
  const doneLoading = () => loadedAt !== null && changedAt < loadedAt && pageIdle() &&
    !transitionsRunning() && !animationsRunning(-Infinity) &&
    !(document.fonts && document.fonts.status === 'loading');
  const look = (opts) => {
    if (!doneLoading()) return { early: false };
    // Before the first frame the observer avoids hit tests where it can:
    // each would make Chromium prepare the whole page for painting first.
    const asked = Object.assign({}, opts, { beforeFirstFrame: !revealed });
    try { return { early: true, observation: globalThis.__webagentObserver.observe(asked) }; }
    catch (e) { return { early: false, error: String(e && e.message || e) }; }
  };
  addEventListener('pageshow', () => {
    pageShown = true;
    for (const [opts, resolve] of lookers.splice(0)) resolve(look(opts));
  }, { once: true });
  function firstLook(opts) {
    if (window !== window.top) return Promise.resolve({ early: false });
    // A small page can be shown before the question reaches it; while the
    // change watch above still runs the same test holds, and the look
    // still spares settling its round trips.
    if (pageShown) {
      const recent = loadedAt !== null && performance.now() - loadedAt < CHANGE_WATCH_MS;
      return Promise.resolve(recent ? look(opts) : { early: false });
    }
    return new Promise((resolve) => lookers.push([opts, resolve]));
  }

  // Animations the action started that move or reveal something and will
  // end: CSS animations and transitions, and the Web Animations API, all
  // of which document.getAnimations() lists. Ones that began before the
  // action (`since`, in the page's clock) are the page's own business, and
  // endless ones (spinners) never finish, so neither is waited for.
  const kebab = (name) => name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  function reveals(animation) {
    if (animation.transitionProperty) return REVEALING.test(animation.transitionProperty);
    const effect = animation.effect;
    if (!effect || !effect.getKeyframes) return false;
    for (const frame of effect.getKeyframes()) {
      for (const key of Object.keys(frame)) {
        if (REVEALING.test(kebab(key))) return true;
      }
    }
    return false;
  }
  function animationsRunning(since) {
    if (!document.getAnimations) return false;
    for (const a of document.getAnimations()) {
      if (a.playState !== 'running') continue;
      if (a.startTime !== null && a.startTime < since) continue;
      const timing = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null;
      if (!timing || !Number.isFinite(timing.endTime)) continue;
      if (reveals(a)) return true;
    }
    return false;
  }

  // Resolves once no DOM mutation happened for `quiet` ms, no timer or
  // animation frame the action's input started is pending, and no
  // transition or animation the action started runs (or after `max`).
  // `sinceAgo` is how long ago the action began. A page that starts
  // nothing is done after one quiet period.
  function domQuiet(quiet, max, sinceAgo, afterLoad) {
    return new Promise((resolve) => {
      const start = performance.now();
      const since = start - (sinceAgo || 0) - 50;
      let last = start, mutations = 0, lateWait = false;
      // After a navigation the quiet counts from the new document's load
      // (or its last change since), not from when settling asks; and a
      // document that has not changed since its load is settled once the
      // first frame after the load is painted, as a person then sees it.
      const loaded = afterLoad && loadedAt !== null;
      if (loaded) last = Math.min(start, Math.max(loadedAt, changedAt));
      const painted = () => loaded && paintedAt !== null && changedAt < loadedAt && mutations === 0;
      const obs = new MutationObserver((records) => { mutations += records.length; last = performance.now(); });
      obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const check = () => {
        const now = performance.now();
        const quietNow = now - last >= quiet || painted();
        const late = quietNow && (inputTimersPending() || transitionsRunning() || animationsRunning(since));
        if (late) lateWait = true;
        if ((quietNow && !late) || now - start >= max) {
          obs.disconnect();
          resolve({ ok: true, mutations, waited: Math.round(now - start), capped: !quietNow || late, late: lateWait,
            closing: closingAsked() });
        } else {
          // Until the first frame after a load is painted, look often.
          const until = late ? Math.min(quiet, 16) : Math.max(1, quiet - (now - last));
          setTimeout(check, loaded && paintedAt === null ? Math.min(until, 2) : until);
        }
      };
      const first = painted() ? 0 : Math.min(quiet - (performance.now() - last), loaded ? 2 : quiet);
      if (first <= 0) check(); else setTimeout(check, first);
    });
  }

