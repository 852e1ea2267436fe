// The baseline `webagent bench suite` is held against: the same 16 demo
// cases (the recipes of recipes/acme.rhai, taking turns) driven by
// Puppeteer, each case in an incognito browser context and ending with a
// JPEG screenshot, at 1, 2 and 4 cases at once, one Chromium per row. It
// prints what `bench suite` prints: wall time, cases per minute, speed-up
// against one worker, how busy the machine's processors were and the
// processor seconds per case.
//
//   target/release/webagent demo --serve-only &        # prints its URL
//   (cd "$(mktemp -d)" && npm install puppeteer-core@23 && \
//     NODE_PATH=$PWD/node_modules node /path/to/bench/puppeteer-suite.js http://127.0.0.1:PORT)
//
// The filter case clicks Apply from the page's own script: Puppeteer's
// click loses its node to the navigation it starts. A case Puppeteer still
// loses to a navigation race counts as not passed; its time counts.
const puppeteer = require('puppeteer-core');
const fs = require('fs');
const base = process.argv[2];
const cpu = () => { const l = fs.readFileSync('/proc/stat','utf8').split('\n')[0].trim().split(/\s+/).slice(1,9).map(Number);
  const tot = l.reduce((a,b)=>a+b,0); return {busy: tot - l[3] - l[4], tot}; };
async function signIn(p) {
  await p.goto(base + '/login', {waitUntil: 'load'});
  await p.type('#email', 'admin@acme.test'); await p.type('#password', 'demo');
  await Promise.all([p.waitForNavigation({waitUntil: 'load'}), p.click('#sign-in')]);
}
async function createOrder(p, customer, product, qty) {
  await p.goto(base + '/orders/new', {waitUntil: 'load'});
  await p.type('#customer', customer);
  await p.select('#product', product);
  await p.$eval('#quantity', (e) => e.value = '');
  await p.type('#quantity', String(qty));
  await Promise.all([p.waitForNavigation({waitUntil: 'load'}), p.click('#create-order')]);
  return p.url().split('?')[0].split('/').pop();
}
const recipes = {
  async signed_in(p) { await signIn(p); await p.goto(base + '/dashboard', {waitUntil: 'load'}); },
  async orders_overview(p) { await signIn(p); await p.goto(base + '/orders', {waitUntil: 'load'});
    const n = await p.$$eval('a', as => as.filter(a => a.textContent.trim().startsWith('#')).length); if (!n) throw new Error('empty'); },
  async shipped_orders(p) { await signIn(p); await p.goto(base + '/orders', {waitUntil: 'load'});
    await p.select('#status-filter', 'shipped');
    await Promise.all([p.waitForNavigation({waitUntil: 'load'}), p.evaluate(() => { setTimeout(() => document.querySelector('[data-testid=apply-filters]').click(), 0); })]);
    await p.waitForSelector('#order-count'); if (!p.url().includes('status=shipped')) throw new Error('not filtered'); },
  async new_order(p) { await signIn(p); await createOrder(p, 'Suite Tester', 'KB-01', 1); },
  async new_order_refunded(p) { await signIn(p); const id = await createOrder(p, 'Recipe Tester', 'MS-02', 2);
    await p.goto(base + '/orders/' + id, {waitUntil: 'load'});
    if (await p.$('#ship-order')) { await Promise.all([p.waitForNavigation({waitUntil:'load'}).catch(()=>{}), p.click('#ship-order')]); await p.waitForSelector('#refund-order'); }
    await p.click('#refund-order'); await p.waitForSelector('#confirm-yes', {visible: true});
    await Promise.all([p.waitForNavigation({waitUntil:'load'}).catch(()=>{}), p.click('#confirm-yes')]);
    await p.waitForFunction(() => document.body.innerText.includes('efunded')); },
};
const names = Object.keys(recipes);
async function row(workers, cases) {
  const browser = await puppeteer.launch({executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run'],
    defaultViewport: {width: 1280, height: 800}});
  const c0 = cpu(); const t0 = Date.now(); let next = 0, passed = 0;
  async function worker() { while (next < cases) { const i = next++;
    const ctx = await browser.createBrowserContext(); const p = await ctx.newPage();
    try { await recipes[names[i % names.length]](p); await p.screenshot({type: 'jpeg'}); passed++; }
    catch (e) { console.error('case', i, names[i % names.length], e.message); }
    await ctx.close(); } }
  await Promise.all(Array.from({length: workers}, worker));
  const secs = (Date.now() - t0) / 1000; const c1 = cpu(); await browser.close();
  return {workers, cases, passed, secs, busy: (c1.busy - c0.busy) / (c1.tot - c0.tot), cpuPerCase: (c1.busy - c0.busy) / 100 / cases};
}
(async () => { let first;
  for (const w of [1, 2, 4]) { const r = await row(w, 16); first = first || r;
    console.log(`workers ${w}  passed ${r.passed}/16  ${r.secs.toFixed(1)} s  ${(16 / r.secs * 60).toFixed(1)} cases/min  speed-up ${(first.secs / r.secs).toFixed(2)}x  CPU busy ${(r.busy * 100).toFixed(0)}%  CPU s/case ${r.cpuPerCase.toFixed(2)}`); }
})();
