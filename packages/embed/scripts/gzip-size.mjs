/* global console, process */
// Prints the page's JavaScript and CSS sizes after `vite build`, gzipped: what the first load
// fetches (the entry and the chunks it imports statically), the chunks fetched on demand (the
// chart chunk, with the first chart), and everything together. Fails the build when everything
// together passes its budget: a viewer of a dashboard with a chart fetches all of it.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const BUDGET = 300 * 1024;
const dist = path.resolve(import.meta.dirname, '../dist');
const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
const assets = path.join(dist, 'assets');
const gz = (file) => zlib.gzipSync(fs.readFileSync(path.join(assets, file))).length;
const entries = [...html.matchAll(/(?:src|href)="\/embed\/assets\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]);
const initial = new Set(entries);
// Static imports of the entry are part of the first load too.
for (const file of [...initial]) {
  if (!file.endsWith('.js')) continue;
  const text = fs.readFileSync(path.join(assets, file), 'utf8');
  for (const m of text.matchAll(/from"\.\/([^"]+\.js)"/g)) initial.add(m[1]);
}
const all = fs.readdirSync(assets).filter((f) => f.endsWith('.js') || f.endsWith('.css'));
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
let first = 0;
let total = 0;
for (const file of all) {
  const size = gz(file);
  total += size;
  if (initial.has(file)) first += size;
  console.log(`  ${initial.has(file) ? 'first load' : 'on demand '}  ${kb(size).padStart(9)} gzip  ${file}`);
}
console.log(`embed page: first load ${kb(first)} gzip, everything ${kb(total)} gzip (budget ${kb(BUDGET)} for everything)`);
if (total > BUDGET) {
  console.error(`The page's files together are over their budget of ${kb(BUDGET)} gzipped.`);
  process.exit(1);
}
