  // ---- names for elements that show no words ----
  //
  // An interactive element with no text and no naming attribute gets a name
  // from, in this order:
  //   1. what the browser's accessible name would use: aria-labelledby, an
  //      image's alt, an inner element's aria-label or title, an SVG <title>
  //      (and a field's aria-describedby) — shown as label="…";
  //   2. guesses — for a form control without a label, the words of its
  //      row (nearest ancestor with short text and no other field, never a
  //      control's own words) or, in a table cell that says nothing, its
  //      column's header; then an SVG <use> reference, words of class / id /
  //      data-icon (self, then descendants) with framework noise dropped, a
  //      background or image file name — shown as name~="…" so the model
  //      can weigh them.
  const NAMED_BY = new Set(['aria-label', 'title', 'alt', 'placeholder', 'label']);
  const NOISE = new Set(['icon', 'icons', 'ico', 'fa', 'fas', 'far', 'fab', 'fal', 'fad', 'fa-solid', 'glyphicon',
    'glyphicons', 'material', 'symbols', 'outlined', 'rounded', 'sharp', 'filled', 'btn', 'button', 'svg', 'ql',
    'mdi', 'bi', 'ion', 'ionicon', 'ionicons', 'feather', 'lucide', 'octicon', 'ui', 'el', 'is', 'has', 'js',
    'active', 'selected', 'disabled', 'hidden', 'visible', 'show', 'open', 'small', 'large', 'lg', 'sm', 'md', 'xs',
    'xl', 'xxl', 'wrapper', 'wrap', 'container', 'inner', 'outer', 'item', 'col', 'flex', 'inline', 'block', 'primary',
    'secondary', 'default', 'light', 'dark', 'white', 'black', 'text', 'control', 'img', 'image', 'sprite', 'sprites',
    'action', 'actions', 'tool', 'toolbar', 'clickable', 'pointer', 'hover', 'focus', 'solid', 'regular', 'the',
    'and', 'with', 'fw', 'lg', 'pull', 'ms', 'me', 'mx', 'my', 'px', 'py', 'mt', 'mb', 'ml', 'mr', 'ng']);
  // Words a class or id token contributes; hashed or generated tokens
  // (css-1x2y3z, sc-bdVaJa, jsx-3141, _a1b2c) contribute none.
  function classWords(token) {
    if (!token || token.length > 40) return [];
    // Digits inside a token mean a hash, except a size suffix (icon-24).
    if (/\d/.test(token) && !/^[a-z]+([-_][a-z]+)*[-_]\d{1,3}$/i.test(token)) return [];
    // Random-looking case mixes (sc-bdVaJa) are generated too.
    if (/[a-z][A-Z][a-z]?[A-Z]/.test(token)) return [];
    const out = [];
    for (const part of token.replace(/([a-z])([A-Z])/g, '$1 $2').split(/[-_\s.:]+/)) {
      const w = part.toLowerCase();
      if (w.length < 3 || /\d/.test(w) || NOISE.has(w)) continue;
      out.push(w);
    }
    return out;
  }
  const WORD_DATA = ['data-icon', 'data-action', 'data-command', 'data-tooltip', 'data-title', 'data-original-title', 'data-tip', 'data-name'];
  function wordsOfElement(e) {
    const words = [];
    const cls = e.getAttribute('class');
    if (cls) for (const t of cls.split(/\s+/)) words.push(...classWords(t));
    const id = e.getAttribute('id');
    if (id) words.push(...classWords(id));
    // Most elements have no data- attribute at all: one look at the names
    // spares eight lookups.
    const names = e.getAttributeNames();
    let data = false;
    for (let i = 0; i < names.length && !data; i++) data = names[i].startsWith('data-');
    if (!data) return words;
    for (const a of WORD_DATA) {
      const v = e.getAttribute(a);
      if (v) words.push(...v.split(/[-_\s]+/).map((w) => w.toLowerCase()).filter((w) => w.length > 1 && !NOISE.has(w)));
    }
    return words;
  }
  const decoded = (s) => { try { return decodeURIComponent(s); } catch (_) { return s; } };
  // Words of a picture's file name (`icons/retweet.3f9a1c@2x.png`: retweet)
  // and of a sprite's fragment (`sprite.svg#retweet`).
  const fileWords = (url) => {
    const m = /([^/?#]*)(?:\?[^#]*)?(?:#(.*))?$/.exec(url || '');
    if (!m) return [];
    const words = [];
    const parts = decoded(m[1]).split('.');
    if (parts.length > 1 && /^[a-z0-9]{2,5}$/i.test(parts[parts.length - 1])) parts.pop();
    for (const part of parts) words.push(...classWords(part.replace(/@\d(\.\d+)?x$/i, '')));
    if (m[2]) words.push(...classWords(decoded(m[2])));
    return words;
  };
  // Words of the picture files a style draws: every url() in `content`,
  // background and mask images (data: URLs carry no name).
  function styleWords(cs, words) {
    urlWords(cs.content, words);
    urlWords(cs.backgroundImage, words);
    urlWords(cs.getPropertyValue('mask-image') || cs.getPropertyValue('-webkit-mask-image'), words);
  }
  function urlWords(value, words) {
    if (!value || value.indexOf('url(') < 0) return;
    const re = /url\(\s*["']?([^"')]+)/g;
    for (let m = re.exec(value); m; m = re.exec(value)) {
      if (!/^data:/i.test(m[1])) words.push(...fileWords(m[1]));
    }
  }
  // What CSS draws for an element: [words of the pictures of its own box
  // and its ::before / ::after boxes, text those boxes show]. Icon fonts'
  // private-use glyphs are no text.
  // Fields and images draw no ::before / ::after boxes.
  const NO_PSEUDO = new Set(['input', 'select', 'textarea', 'img', 'iframe', 'video', 'audio', 'canvas']);
  function drawn(el, cs) {
    const words = [];
    let text = '';
    styleWords(cs || getComputedStyle(el), words);
    if (NO_PSEUDO.has(el.localName)) return [words, text];
    for (const pseudo of ['::before', '::after']) {
      const ps = getComputedStyle(el, pseudo);
      const content = ps.content;
      // A pseudo box exists only with content.
      if (!content || content === 'none' || content === 'normal') continue;
      styleWords(ps, words);
      const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(content);
      if (quoted) {
        const shown = squeeze(quoted[1].replace(/\\(.)/g, '$1').replace(/[\uE000-\uF8FF]|[\uDB80-\uDBFF][\uDC00-\uDFFF]/g, ''));
        // Words, not a counter badge's digits or a decorative bullet.
        if (/\p{L}/u.test(shown)) text = squeeze(`${text} ${shown}`);
      }
    }
    return [words, text];
  }
  const textOfIds = (el, attr) => {
    const ids = el.getAttribute(attr);
    if (!ids) return '';
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      const ref = id && root.getElementById ? root.getElementById(id) : null;
      if (ref) parts.push(ref.getAttribute('aria-label') || ref.textContent || '');
    }
    return squeeze(parts.join(' '));
  };
  const CONTROL = 'input:not([type=hidden]),select,textarea,button';

  // [attribute, value] naming `el`, or null; `cs`: its computed style when
  // the caller has it.
  function nameFor(el, tag, cs) {
    let s = textOfIds(el, 'aria-labelledby');
    if (s) return ['label', clip(s, 60)];
    // Accessible-name sources inside the element.
    let seen = 0;
    const guesses = [];
    const inner = (node, depth) => {
      for (let c = node.firstElementChild; c && seen < 24; c = c.nextElementSibling) {
        seen += 1;
        const t = c.localName;
        if (t === 'img' || (t === 'input' && c.type === 'image')) {
          const alt = squeeze(c.getAttribute('alt') || c.getAttribute('title') || '');
          if (alt) return alt;
          guesses.push(...fileWords(c.getAttribute('src')));
        }
        const label = c.getAttribute('aria-label') || c.getAttribute('title');
        if (label && squeeze(label)) return squeeze(label);
        if (t === 'title' && c.parentNode && c.parentNode.localName === 'svg') {
          const st = squeeze(c.textContent || '');
          if (st) return st;
        }
        if (t === 'use') {
          const ref = c.getAttribute('href') || c.getAttribute('xlink:href') || '';
          guesses.push(...classWords(ref.replace(/^.*#/, '')));
        }
        if (depth < 3) {
          const r = inner(c, depth + 1);
          if (r) return r;
        }
        guesses.push(...wordsOfElement(c));
      }
      return '';
    };
    if (tag === 'img') {
      const alt = squeeze(el.getAttribute('alt') || '');
      if (alt) return ['label', clip(alt, 60)];
    }
    // (Most fields have no children: no walk.)
    s = el.firstElementChild ? inner(el, 0) : '';
    if (s) return ['label', clip(s, 60)];
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      s = textOfIds(el, 'aria-describedby');
      if (s) return ['label', clip(s, 60)];
      // Where it sits names it, as a person reading the form would guess.
      s = placeText(el);
      if (s) return ['name~', clip(s, 60)];
    }
    // Text CSS draws before or after the element is part of its name as a
    // browser computes it.
    const [pictures, cssText] = drawn(el, cs);
    if (cssText) return ['label', clip(cssText, 60)];
    // Guesses: own class/id first, then the pictures its style draws, then
    // what is inside (and the pictures drawn for the first few of those).
    const words = wordsOfElement(el).concat(pictures, guesses);
    if (tag === 'img') words.push(...fileWords(el.getAttribute('src')));
    for (let c = el.firstElementChild, k = 0; c && k < 4 && !words.length; c = c.nextElementSibling, k++) {
      words.push(...drawn(c)[0]);
    }
    const unique = [];
    for (const w of words) if (!unique.includes(w)) unique.push(w);
    if (unique.length) return ['name~', unique.slice(0, 3).join(' ')];
    return null;
  }

  // How many controls other than buttons `e` holds, counted once per
  // element and observation (`fieldCounts` is new for each).
  let fieldCounts = new Map();
  function fieldsIn(e) {
    let n = fieldCounts.get(e);
    // A box around nothing but one childless element (a table cell around
    // its field) holds that element alone: no search needed.
    const only = n === undefined ? e.firstElementChild : null;
    if (only && !only.nextElementSibling && !only.firstElementChild) {
      n = only.localName !== 'button' && only.matches(CONTROL) ? 1 : 0;
      fieldCounts.set(e, n);
    } else if (n === undefined) {
      n = 0;
      for (const c of e.querySelectorAll(CONTROL)) if (c.localName !== 'button') n += 1;
      fieldCounts.set(e, n);
    }
    return n;
  }

  // The words of the row a lone field sits in: the nearest ancestor (up
  // to four levels) with short text and no other field in it, without the
  // words of the controls in it (a button beside a field names the
  // button). A field in a cell of a table with a header row that says
  // nothing of it takes its column's header: past the cell, the table's
  // row is all the fields' row.
  function placeText(el) {
    const mine = el.localName !== 'button' && el.matches(CONTROL) ? 1 : 0;
    let e = composedParent(el);
    for (let depth = 0; e && depth < 4; depth++, e = composedParent(e)) {
      if (e.localName === 'form' || e.localName === 'body') return '';
      // Another field in it means it is not this field's row; a table's
      // row holds many, and is counted once. (`contains` stays in one
      // tree: a field in a shadow root is not among its host's
      // ancestors' own.)
      if (fieldsIn(e) > (mine && e.contains(el) ? 1 : 0)) return '';
      // A long subtree is not a row anyway.
      const raw = e.textContent || '';
      if (raw.length > 400) return '';
      if (/\S/.test(raw)) {
        const words = shownWords(e, el, true, false);
        // Words, not the bar between two links ("Today |").
        if (/[\p{L}\p{N}]/u.test(words)) return words.length <= 80 ? words : '';
      }
      if (e.localName === 'td' || e.localName === 'th') {
        const header = columnHeader(e);
        if (header !== null) return header;
      }
    }
    return '';
  }

  // Controls whose words name themselves, not the fields beside them.
  const SELF_NAMED = new Set(['a', 'button', 'select', 'textarea', 'option', 'summary']);

  // The words `root` shows, as innerText gives them but with a picture's
  // alt text in its place (`pictures`: as [icon: True]) and without the
  // words of `skip` or, with `controls`, of the controls inside.
  function shownWords(root, skip, controls, pictures) {
    const parts = [];
    const collect = (node) => {
      for (let c = node.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) { parts.push(c.data); continue; }
        if (c.nodeType !== 1 || c === skip || SKIP.has(c.localName)) continue;
        const t = c.localName;
        if (controls && (SELF_NAMED.has(t) || WIDGET_ROLES.has(c.getAttribute('role')))) continue;
        if (!c.checkVisibility(SHOWN)) continue;
        if (t === 'img') {
          const alt = pictures ? altText(c) : '';
          if (alt) {
            const r = c.getBoundingClientRect();
            parts.push(` ${pictureToken(c, alt, r.width <= ICON_PX && r.height <= ICON_PX)} `);
          }
          continue;
        }
        const block = BLOCK.has(t);
        if (block) parts.push(' ');
        collect(c);
        if (block) parts.push(' ');
      }
    };
    collect(root);
    return squeeze(parts.join(''));
  }
  // What innerText leaves out: hidden and undisplayed content.
  const SHOWN = { visibilityProperty: true };

  // The header of the column a table cell stands in: the cells its
  // `headers` attribute names, or the lowest header cell over its column.
  // '' when the table's header says nothing there; null when the table
  // has no header row (a table that lays a form out).
  let headersByTable = new Map();
  function columnHeader(cell) {
    const named = textOfIds(cell, 'headers');
    if (named) return named;
    const row = cell.parentElement;
    if (!row || row.localName !== 'tr') return null;
    let table = row.parentElement;
    if (table && table.localName !== 'table') table = table.parentElement;
    if (!table || table.localName !== 'table') return null;
    let headers = headersByTable.get(table);
    if (headers === undefined) {
      headers = columnHeaders(table);
      headersByTable.set(table, headers);
    }
    if (headers === null) return null;
    if (headers.rows.includes(row)) return '';
    let column = 0;
    for (let c = cell.previousElementSibling; c; c = c.previousElementSibling) column += c.colSpan || 1;
    return headers.names[column] || '';
  }

  // A table's header rows (its <thead>'s, or a first row of <th> only)
  // and the words over each column, the lowest header cell's where header
  // cells span rows and columns; null without a header row.
  function columnHeaders(table) {
    let rows = null;
    const head = table.tHead;
    if (head && head.rows.length) rows = Array.from(head.rows);
    else {
      const first = table.rows[0];
      if (first && first.cells.length && Array.from(first.cells).every((c) => c.localName === 'th')) rows = [first];
    }
    if (!rows) return null;
    const names = [];
    const taken = rows.map(() => []);  // columns a cell from a row above still covers
    rows.forEach((row, r) => {
      let column = 0;
      for (const cell of row.cells) {
        while (taken[r][column]) column++;
        const across = cell.colSpan || 1, down = Math.min(cell.rowSpan || 1, rows.length - r);
        const words = shownWords(cell, null, false, false);
        for (let k = column; k < column + across; k++) {
          if (words) names[k] = words;
          for (let d = 1; d < down; d++) taken[r + d][k] = true;
        }
        column += across;
      }
    });
    return { rows, names };
  }

