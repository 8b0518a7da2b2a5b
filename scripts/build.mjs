#!/usr/bin/env node
// npm run build: dist/ from scratch with the bundles rolldown.config.mjs describes, and one line
// saying what was written (rolldown's own CLI prints every chunk).
import { rm } from 'node:fs/promises';
import { build } from 'rolldown';
import config from '../rolldown.config.mjs';

const started = performance.now();
await rm(new URL('../dist', import.meta.url), { recursive: true, force: true });
const outputs = await build(config);
const files = [outputs].flat().flatMap((result) => result.output).filter((item) => item.type === 'chunk');
const bytes = files.reduce((sum, chunk) => sum + chunk.code.length, 0);
console.log(`build: ${files.length} scripts (${(bytes / 1024 / 1024).toFixed(1)} MiB) in dist/, ${Math.round(performance.now() - started)} ms`);
