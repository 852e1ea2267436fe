  // ---- controls repeated once per row ----

  // Attributes that differ between rows without naming the control.
  const ROW_VARYING = new Set(['href', 'value', 'value+', 'checked', 'selected', 'aria-checked', 'aria-selected',
    'aria-pressed', 'aria-expanded', 'src', 'disabled', 'scrollable', 'readonly', 'required']);
  const lineKey = (item) => {
    let key = `${item.tag}\u0001${item.text || ''}`;
    const attrs = item.attrs;
    if (attrs) {
      for (let i = 0; i < attrs.length; i++) {
        if (!ROW_VARYING.has(attrs[i][0])) key += `\u0001${attrs[i][0]}=${attrs[i][1]}`;
      }
    }
    return key;
  };

  // Controls whose lines would read alike (a retweet per post, an Edit
  // per table row) get in="…": the first words of their row, the largest
  // ancestor that holds no other control of the same line. A row found
  // this way is structural: whatever repeats (list items, table rows,
  // cards), however the site names its classes. A control nested under a
  // listed element of its row that shows text is placed by that line.
  function tieToRows(lines) {
    const groups = new Map();
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const key = lineKey(line[1]);
      const group = groups.get(key);
      if (group) group.push(line); else groups.set(key, [line]);
    }
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const counts = new Map();
      const chains = group.map(([c]) => {
        const chain = [];
        for (let a = composedParent(c.el), d = 0; a && d < 12; a = composedParent(a), d++) {
          if (a.localName === 'body' || a.localName === 'html') break;
          chain.push(a);
          counts.set(a, (counts.get(a) || 0) + 1);
        }
        return chain;
      });
      // Links to one address do one thing wherever they sit (a section's
      // link in the sidebar and in its tabs): nothing to tell apart.
      const hrefs = new Set(group.map(([c]) => c.el.getAttribute('href')));
      if (hrefs.size === 1 && !hrefs.has(null)) continue;
      const rows = group.map((line, i) => {
        let row = null;
        for (const a of chains[i]) { if (counts.get(a) === 1) row = a; else break; }
        return row;
      });
      // A row is one of a kind's repeats (items of one list, rows of one
      // table, cards of one feed): a sibling of the same tag holds another
      // control of the group. Two unlike regions (a sidebar and the main
      // column) are not rows.
      const kin = new Map();
      for (const row of rows) {
        if (!row) continue;
        const key = row.parentNode;
        const tags = kin.get(key) || new Map();
        tags.set(row.localName, (tags.get(row.localName) || 0) + 1);
        kin.set(key, tags);
      }
      const found = group.map(([c, , parent], i) => {
        const row = rows[i];
        if (!row || kin.get(row.parentNode).get(row.localName) < 2) return '';
        if (parent && ancestorOf(row, parent.el) && elementsText(parent)) return '';
        return rowWords(row, c.el);
      });
      // Rows that start alike are told apart by more of their words.
      const leads = found.map((words) => lead(words, ROW_LEAD));
      group.forEach(([, item], i) => {
        if (!leads[i]) return;
        const twin = leads.some((l, j) => j !== i && l === leads[i]);
        (item.attrs || (item.attrs = [])).push(['in', twin ? lead(found[i], ROW_LEAD * 2) : leads[i]]);
      });
    }
  }
  // The words a listed element shows of its own, not only those of the
  // listed elements inside it (a toolbar's buttons do not place a row).
  const elementsText = (cand) => cand.ownWords && squeeze(cand.text);

  // An ARIA listbox whose options are not all listed (scrolled out of its
  // box, or past the observed band) names the rest on its own line, so a
  // model knows they are there to scroll to; the words of the listed ones
  // are on their own lines.
  function unlistedOptions(lines) {
    let shown = null;
    for (let i = 0; i < lines.length; i++) {
      const c = lines[i][0], item = lines[i][1];
      if (c.ownWords || !item.attrs) continue;
      let listbox = false;
      for (let j = 0; j < item.attrs.length && !listbox; j++) listbox = item.attrs[j][0] === 'role' && item.attrs[j][1] === 'listbox';
      if (!listbox) continue;
      const options = c.el.querySelectorAll('[role="option"]');
      if (!options.length) continue;
      if (!shown) shown = new Set(listed);
      const rest = Array.from(options).filter((o) => !shown.has(o));
      if (rest.length) item.text = `options not listed: ${optionList(rest, '')}`;
    }
  }

  // A row's words without the control's own, its pictures' alt text
  // among them (a yes / no column).
  function rowWords(row, control) {
    const raw = row.textContent || '';
    if (raw.length <= 3000) return shownWords(row, control, false, true);
    // The start of a very long row is enough and is cheaper to take from
    // the source.
    let words = squeeze(raw.slice(0, 600));
    const own = squeeze(control.innerText || '');
    if (own) words = squeeze(words.replace(own, ' '));
    return words;
  }
  // The first words of `s` up to about n characters. A word is never cut
  // (a long first word is kept whole up to 2n, or nothing is said), so a
  // secret shown in a row is either whole, and masked, or left out.
  function lead(s, n) {
    if (s.length <= n) return s;
    let cut = s.lastIndexOf(' ', n);
    if (cut <= 0) cut = s.indexOf(' ');
    if (cut <= 0) return s.length <= 2 * n ? s : '';
    if (cut > 2 * n) return '';
    return `${s.slice(0, cut)}…`;
  }

