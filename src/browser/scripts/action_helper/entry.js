  function present(args) {
    if (args.selector !== undefined) {
      let matches;
      try { matches = document.querySelectorAll(args.selector); }
      catch (e) { return fail('invalid_params', `the browser cannot read selector \`${args.selector}\`: ${e.message}`); }
      const count = Array.from(matches).filter(visible).length;
      return { ok: true, found: count > 0, count };
    }
    const text = document.body ? document.body.innerText : '';
    return { ok: true, found: text.includes(args.text) };
  }

  // The observer reads the page as observations do (icons named, fields'
  // values quoted exactly), so read_page and the page text agree.
  function readPage(args) {
    const read = globalThis.__webagentObserver.read(args.limit);
    return { ok: true, url: location.href, title: document.title, text: read.text,
      clipped: read.clipped, chars: read.chars };
  }

  async function run(target, op, args) {
    try {
      let found = null;
      if (target) {
        found = find(target);
        if (!found.ok) return found;
        if (args && args.to) {
          const to = find(args.to);
          if (!to.ok) return to;
          args.toEl = to.el;
        }
      }
      const result = await ops[op](found, args || {});
      if (found && found.matched !== undefined && result && result.ok) {
        result.matched = found.matched;
        result.used = found.used;
      }
      return result;
    } catch (e) {
      return fail('unknown', `the page raised an error during ${op}: ${e && e.message ? e.message : e}`);
    }
  }

  // Where a selector leads in this document: here, or into a frame of
  // another origin (`cross`, with the part that finds the <iframe> and the
  // rest for inside it).
  function route(selector) {
    const p = globalThis.__webagentObserver.pierce(selector);
    if (p.error === 'missing') return { ...fail('not_found', p.detail), retry: true };
    if (p.error) return fail('invalid_params', `the browser cannot read selector \`${selector}\`: ${p.detail}`);
    if (p.cross) return { ok: true, cross: true, prefix: p.prefix, rest: p.rest };
    return { ok: true, cross: false };
  }

  globalThis.__webagentAct = {
    run,
    route,
    domQuiet,
    firstLook,
    present,
    readPage,
    marker: Math.random(),
  };
  return 'installed';
})()
