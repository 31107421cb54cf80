#!/usr/bin/env node
// Parses PowerShell files with tree-sitter-powershell and reports syntax errors as JSON.
//   node check.cjs FILE...        -> [{"file":..., "errors":[{"line":..,"column":..,"kind":"ERROR|MISSING","text":..}]}]
// Exit status: 0 when every file parses cleanly, 1 when any has errors, 2 on usage/tooling problems.
'use strict';
const fs = require('fs');
const path = require('path');
const { Parser, Language } = require('web-tree-sitter');

async function main(files) {
  if (files.length === 0) {
    process.stderr.write('usage: check.cjs FILE...\n');
    return 2;
  }
  await Parser.init();
  const wasm = require.resolve('tree-sitter-powershell/tree-sitter-powershell.wasm');
  const lang = await Language.load(wasm);
  const parser = new Parser();
  parser.setLanguage(lang);
  const results = [];
  for (const file of files) {
    const tree = parser.parse(fs.readFileSync(file, 'utf8'));
    const errors = [];
    collect(tree.rootNode, errors);
    results.push({ file: path.resolve(file), errors });
    tree.delete();
  }
  process.stdout.write(JSON.stringify(results) + '\n');
  return results.some((r) => r.errors.length > 0) ? 1 : 0;
}

function collect(node, errors) {
  if (!node.hasError && !node.isMissing) return;
  if (node.isError || node.isMissing) {
    errors.push({
      line: node.startPosition.row + 1,
      column: node.startPosition.column + 1,
      kind: node.isMissing ? 'MISSING' : 'ERROR',
      text: node.text.slice(0, 120),
    });
    if (errors.length >= 20) return;
  }
  for (const child of node.children) collect(child, errors);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
    process.exit(2);
  },
);
