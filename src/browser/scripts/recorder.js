// The recorder's part in the page: the body of a function that runs once in
// webagent's isolated world of every document (every frame), with `locate`
// (locate.js, beside this file) in scope. It watches what the person does
// and sends each action, with the facts that find its element again, through the
// `__webagentRecord` binding.
//
// It must not change the page: listeners sit on the window in the capture
// phase of the isolated world, which the page's scripts cannot see; none of
// them prevents a default or stops propagation, and nothing is added to the
// document. Reading a field's value or an element's box changes nothing.
if (globalThis.__webagentRecorder) return 'installed';
Object.defineProperty(globalThis, '__webagentRecorder', { value: true });

const send = (step) => {
  step.url = location.href;
  try { globalThis.__webagentRecord(JSON.stringify(step)); } catch (_) { /* not recording */ }
};
const facts = (el) => {
  try { return locate(el, { record: true }); } catch (_) { return null; }
};
const tag = (el) => (el && el.localName) || '';
const typeOf = (el) => (el.getAttribute('type') || 'text').toLowerCase();
// Fields whose value is typed: their steps are fills, not clicks or keys.
const TYPED = new Set(['text', 'email', 'password', 'search', 'tel', 'url', 'number',
  'date', 'datetime-local', 'month', 'week', 'time', 'color']);
// Editable by its `contenteditable` attribute or an ancestor's, read from
// the attributes: `isContentEditable` asks for the element's style, which
// after a click's focus change means computing the page's style before the
// page's own listeners run.
const editable = (el) => {
  for (let a = el; a && a.nodeType === 1; a = a.parentElement) {
    const value = a.getAttribute('contenteditable');
    if (value !== null) return value.toLowerCase() !== 'false';
  }
  return false;
};
const typed = (el) => (tag(el) === 'input' && TYPED.has(typeOf(el))) || tag(el) === 'textarea' ||
  (!!el && editable(el));
// The element an event happened on, inside open shadow roots too.
const origin = (event) => {
  const path = event.composedPath();
  for (const node of path) if (node && node.nodeType === 1) return node;
  return null;
};
// What a person means by a click: the nearest control around the point.
const CONTROL = 'a[href], button, input, select, textarea, summary, label, option, [role=button], ' +
  '[role=link], [role=checkbox], [role=radio], [role=menuitem], [role=tab], [role=option], [role=switch], [onclick]';
const control = (event) => {
  for (const node of event.composedPath()) {
    if (node && node.nodeType === 1 && node.matches(CONTROL)) return node;
    if (node === document.body) break;
  }
  return origin(event);
};

// A field being typed into: flushed as one fill when the person leaves it,
// presses Enter in it, submits its form or acts elsewhere.
let editing = null;
const valueOf = (el) => (editable(el) && tag(el) !== 'input' && tag(el) !== 'textarea')
  ? el.innerText : el.value;
const flush = () => {
  const field = editing;
  editing = null;
  if (!field || !field.el.isConnected) return;
  const value = valueOf(field.el);
  if (value === field.sent) return;
  // A password's value never leaves the page: the step names a secret.
  if (tag(field.el) === 'input' && typeOf(field.el) === 'password') {
    send({ kind: 'fill', secret: true, facts: field.facts });
  } else {
    send({ kind: 'fill', value, facts: field.facts });
  }
};

addEventListener('input', (event) => {
  const el = origin(event);
  if (!el || !typed(el) || !event.isTrusted) return;
  if (!editing || editing.el !== el) {
    flush();
    editing = { el, facts: facts(el), sent: undefined };
  }
}, true);
addEventListener('change', (event) => {
  const el = origin(event);
  if (!el || !event.isTrusted) return;
  if (editing && editing.el === el) { flush(); return; }
  if (tag(el) === 'select') {
    flush();
    const chosen = Array.from(el.selectedOptions).map((o) => o.text.trim());
    send({ kind: 'select', text: chosen[0] || '', value: el.value, facts: facts(el) });
  } else if (tag(el) === 'input' && typeOf(el) === 'file') {
    flush();
    const names = Array.from(el.files || []).map((f) => f.name);
    send({ kind: 'upload', files: names, facts: facts(el) });
  }
}, true);
addEventListener('focusout', (event) => {
  if (editing && editing.el === origin(event)) flush();
}, true);
addEventListener('submit', () => flush(), true);

// Hover: a control the pointer revealed (a menu that opens on hover)
// becomes a step before the click on it. Two kinds of menus are told:
// - one a script opens: when the pointer comes onto an element, the
//   children hidden then of it and of its two nearest ancestors are noted
//   (this listener runs before the page's own); a later click inside one
//   of them was made possible by that hover;
// - one a `:hover` style rule opens (which applies before any listener
//   runs): a click inside what such a rule shows was made possible by
//   hovering the rule's hovered element.
// A container with many children is no menu and is not looked through.
const shown = (el) => el.checkVisibility
  ? el.checkVisibility({ opacityProperty: true, visibilityProperty: true })
  : !!(el.offsetWidth || el.offsetHeight);
const HOVER_CHILDREN = 50;
let hovers = [];
// The elements the pointer came onto lately, newest last.
let lately = [];
addEventListener('mouseover', (event) => {
  if (!event.isTrusted) return;
  const el = origin(event);
  if (!el) return;
  lately = lately.slice(-7).concat([el]);
  const hidden = [];
  for (let a = el, up = 0; a && up < 3 && a !== document.body; a = a.parentElement, up++) {
    if (a.childElementCount > HOVER_CHILDREN) break;
    for (const child of a.children) if (!shown(child)) hidden.push(child);
  }
  if (hidden.length) hovers = hovers.slice(-4).concat([{ el, hidden }]);
}, true);
// The selectors of `:hover` rules that show or hide something, split at
// each `:hover` (`.menu:hover .sub` gives `.menu` and `.menu .sub`).
// They are read again only when the page's style sheets or their rule
// counts changed: a site's sheets hold thousands of rules.
let hoverCache = { key: null, rules: [] };
const hoverRules = () => {
  const sheets = document.styleSheets;
  let key = String(sheets.length);
  for (const sheet of sheets) {
    try { key += ':' + sheet.cssRules.length; } catch (_) { key += ':-'; }
  }
  if (key === hoverCache.key) return hoverCache.rules;
  const found = [];
  const walk = (rules) => {
    for (const rule of rules) {
      if (rule.cssRules && !rule.selectorText) { walk(rule.cssRules); continue; }
      const text = rule.selectorText || '';
      if (!text.includes(':hover')) continue;
      const style = rule.style;
      if (!style || !(style.display || style.visibility || style.opacity)) continue;
      for (const part of text.split(',')) {
        const at = part.indexOf(':hover');
        if (at < 0) continue;
        found.push({ hovered: part.slice(0, at).trim(), shows: part.replace(/:hover/g, '').trim() });
      }
    }
  };
  for (const sheet of sheets) {
    try { walk(sheet.cssRules); } catch (_) { /* another origin's sheet */ }
  }
  hoverCache = { key, rules: found };
  return found;
};
// The element whose hover revealed `el`, which shows now (it was clicked).
const revealedBy = (el) => {
  for (let i = hovers.length - 1; i >= 0; i--) {
    const hover = hovers[i];
    if (hover.el.isConnected && hover.hidden.some((h) => h.contains(el))) return hover.el;
  }
  for (const rule of hoverRules()) {
    try {
      if (!rule.hovered || !el.closest(rule.shows)) continue;
      const under = document.querySelectorAll(rule.hovered + ':hover');
      if (!under.length) continue;
      // The trigger: what the pointer was on inside the hovered element
      // before it went into what the hover showed.
      const hovered = under[under.length - 1];
      const menu = el.closest(rule.shows);
      for (let i = lately.length - 1; i >= 0; i--) {
        const was = lately[i];
        if (was.isConnected && hovered.contains(was) && !menu.contains(was)) {
          return was.closest(CONTROL) || was;
        }
      }
      return hovered;
    } catch (_) { /* a selector this engine does not take */ }
  }
  return null;
};

// Clicks: the label's click stands for the control it activates, so the
// click the browser then sends to that control is not a second step.
let activated = null;
addEventListener('click', (event) => {
  const el = control(event);
  // Only a hover since the last click counts: what shows after a click
  // may be that click's doing.
  const since = hovers;
  if (event.isTrusted) hovers = [];
  if (activated && activated === el) { activated = null; return; }
  activated = null;
  if (!el || !event.isTrusted) return;
  // Choosing in a <select> is its change; typing into a field is its fill;
  // a file input's click opens the chooser, and the choice is the step.
  if (tag(el) === 'select' || tag(el) === 'option') return;
  if (typed(el)) return;
  if (tag(el) === 'input' && typeOf(el) === 'file') return;
  // A label that only moves the focus to its field or <select> is not a
  // step: what is then typed or chosen is.
  const labelled = tag(el) === 'label' ? el.control : null;
  if (labelled && (typed(labelled) || tag(labelled) === 'select')) return;
  flush();
  if (labelled) {
    // The browser clicks the control next, in this same task.
    activated = labelled;
    setTimeout(() => { activated = null; }, 0);
  }
  hovers = since;
  const hovered = revealedBy(el);
  hovers = [];
  if (hovered) send({ kind: 'hover', facts: facts(hovered) });
  send({ kind: 'click', facts: facts(el) });
}, true);

// Keys that do something: Enter and Escape, and shortcuts with a modifier.
// Enter in a multi-line field is typing.
const MODIFIERS = new Set(['Control', 'Shift', 'Alt', 'Meta']);
addEventListener('keydown', (event) => {
  if (!event.isTrusted || MODIFIERS.has(event.key)) return;
  if (picks(event)) return;
  const el = origin(event);
  const shortcut = event.ctrlKey || event.metaKey || event.altKey;
  const multiline = el && (tag(el) === 'textarea' || editable(el));
  let keys = null;
  if (shortcut) {
    const held = [];
    if (event.ctrlKey) held.push('Control');
    if (event.altKey) held.push('Alt');
    if (event.metaKey) held.push('Meta');
    if (event.shiftKey) held.push('Shift');
    keys = held.concat([event.key.length === 1 ? event.key.toLowerCase() : event.key]).join('+');
  } else if (event.key === 'Escape' || (event.key === 'Enter' && !multiline)) {
    keys = event.key;
  }
  if (!keys) return;
  flush();
  send({ kind: 'keys', keys });
}, true);

// Drag and drop: the element picked up and the one it was dropped on.
let dragged = null;
addEventListener('dragstart', (event) => {
  if (!event.isTrusted) return;
  flush();
  const el = origin(event);
  dragged = el ? facts(el) : null;
}, true);
addEventListener('drop', (event) => {
  if (!event.isTrusted || !dragged) return;
  const el = origin(event);
  if (el) send({ kind: 'drag', from: dragged, to: facts(el) });
  dragged = null;
}, true);
// Picking an element to assert on in a headed window: the person points
// at it and presses Alt+Shift+A (by the key's place, so any layout and
// macOS's Option work). The element under the pointer is reported for the
// workbench's assertion picker; the keys are no step.
let pointed = null;
const pointedAt = (event) => {
  if (event.isTrusted) pointed = control(event);
};
addEventListener('mousemove', pointedAt, true);
addEventListener('mouseover', pointedAt, true);
const picks = (event) => event.altKey && event.shiftKey && !event.ctrlKey && !event.metaKey &&
  event.code === 'KeyA';
addEventListener('keydown', (event) => {
  if (!event.isTrusted || !picks(event) || !pointed || !pointed.isConnected) return;
  flush();
  send({ kind: 'pick', facts: facts(pointed) });
}, true);
// The recording stops: a field still being edited gives its fill.
Object.defineProperty(globalThis, '__webagentRecorderFlush', { value: () => { flush(); return true; } });
// A document left while a field is being edited still gives its fill.
addEventListener('pagehide', () => flush(), true);
return 'installed';
