#!/usr/bin/env node
// Parses PowerShell files with tree-sitter-powershell and reports syntax errors as JSON.
//   node check.cjs FILE...        -> [{"file":..., "errors":[{"line":..,"column":..,"kind":"ERROR|MISSING","text":..}]}]
//   node check.cjs --calls FILE   -> [{"function":..,"name":..,"args":[..],"blocks":["try",..],"line":..}]
//     every command and method call in source order, with its enclosing function ("" at top level)
//     and the try/catch/finally blocks around it, for tests that check what a script does.
// Exit status: 0 when every file parses cleanly, 1 when any has errors, 2 on usage/tooling problems.
'use strict';
// V8 compiles the grammar's WebAssembly (1 MB) with both its baseline compiler (Liftoff) and its
// optimizing one (TurboFan); the second takes 8-10 s of CPU at every start, for a parse of a few
// milliseconds. Liftoff alone runs the same code.
require('v8').setFlagsFromString('--liftoff-only');
const fs = require('fs');
const path = require('path');
const { Parser, Language } = require('web-tree-sitter');

async function main(args) {
  const callsMode = args[0] === '--calls';
  const files = callsMode ? args.slice(1) : args;
  if (files.length === 0 || (callsMode && files.length !== 1)) {
    process.stderr.write('usage: check.cjs FILE... | check.cjs --calls FILE\n');
    return 2;
  }
  await Parser.init();
  const wasm = require.resolve('tree-sitter-powershell/tree-sitter-powershell.wasm');
  const lang = await Language.load(wasm);
  const parser = new Parser();
  parser.setLanguage(lang);
  if (callsMode) {
    const tree = parser.parse(fs.readFileSync(files[0], 'utf8'));
    const calls = [];
    walk(tree.rootNode, '', [], calls);
    process.stdout.write(JSON.stringify(calls) + '\n');
    return tree.rootNode.hasError ? 1 : 0;
  }
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

// walk collects commands (Name arg...) and method calls ([Type]::Method(...), $x.Method(...)).
function walk(node, fn, blocks, calls) {
  if (node.type === 'function_statement') {
    const name = node.namedChildren.find((c) => c.type === 'function_name');
    fn = name ? name.text : fn;
  }
  if (node.type === 'try_statement') blocks = blocks.concat('try');
  if (node.type === 'catch_clause') blocks = blocks.slice(0, -1).concat('catch');
  if (node.type === 'finally_clause') blocks = blocks.slice(0, -1).concat('finally');
  if (node.type === 'command') {
    const name = node.descendantsOfType('command_name')[0];
    const elements = node.namedChildren.find((c) => c.type === 'command_elements');
    const args = elements ? elements.namedChildren.filter((c) => c.type !== 'command_argument_sep').map((c) => c.text) : [];
    calls.push({ function: fn, name: name ? name.text : node.text, args, blocks, line: node.startPosition.row + 1 });
  }
  if (node.type === 'invokation_expression') {
    const text = node.text;
    calls.push({ function: fn, name: text.slice(0, text.indexOf('(')), args: [text], blocks, line: node.startPosition.row + 1 });
  }
  for (const child of node.namedChildren) walk(child, fn, blocks, calls);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
    process.exit(2);
  },
);
