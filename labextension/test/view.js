// What a rendered transcript shows, as data both renderers can be compared on (the same
// extraction as tests/contract/transcript_view.py, over the labextension's DOM).
'use strict';

const TOP_FIELDS = ['footer', 'error', 'ending'];

function normalise(text) {
  const flat = text.replace(/[ \t\n\r\f\v]+/g, ' ').replace(/^ +| +$/g, '');
  const chars = Array.from(flat); // code points, as Python counts
  if (chars.length > 300) {
    return `${chars.slice(0, 150).join('')} …[${chars.length} chars]… ${chars.slice(-80).join('')}`;
  }
  return flat;
}

function text(node) {
  if (node.nodeType === 3) {
    return node.data;
  }
  if (node.nodeType !== 1 || ['STYLE', 'SCRIPT', 'BUTTON'].includes(node.tagName)) {
    return '';
  }
  return Array.from(node.childNodes).map(text).join('');
}

function fieldText(node) {
  if (node.tagName === 'IMG') {
    const src = node.getAttribute('src') || '';
    const match = /^data:([^;,]*);base64,([\s\S]*)$/.exec(src);
    return match ? `${match[1]} base64:${match[2].length}` : `src:${src.slice(0, 40)}`;
  }
  if (node.hasAttribute('data-nbt-lines')) {
    return normalise(Array.from(node.children).map(c => text(c).replace(/\n$/, '')).join('\n'));
  }
  return normalise(text(node));
}

function viewOf(root) {
  const out = { items: [], footer: '', error: '', ending: '' };
  function walk(node, item) {
    for (const child of Array.from(node.children)) {
      const kind = child.getAttribute('data-nbt-item');
      if (kind !== null) {
        const found = { kind, fields: {} };
        if (child.tagName === 'DETAILS') {
          found.open = child.hasAttribute('open');
        }
        out.items.push(found);
        walk(child, found);
        continue;
      }
      const name = child.getAttribute('data-nbt');
      if (name !== null) {
        if (item === null && TOP_FIELDS.includes(name)) {
          out[name] = fieldText(child);
        } else if (item !== null) {
          (item.fields[name] = item.fields[name] || []).push(fieldText(child));
        }
        continue;
      }
      walk(child, item);
    }
  }
  walk(root, null);
  return out;
}

module.exports = { viewOf, normalise };
