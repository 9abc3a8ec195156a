#!/usr/bin/env node
// Runs the pinned pnpm on a machine that has only Node and npm (scripts/deps.mjs installs it).
//
//   node scripts/pnpm.mjs ensure      install workspace dependencies when they are missing or stale
//   node scripts/pnpm.mjs <args...>   run pnpm with those arguments
import { ensureDeps, pnpm } from "./deps.mjs";

const [cmd, ...rest] = process.argv.slice(2);
process.exit(cmd === "ensure" ? ensureDeps() : pnpm([cmd, ...rest].filter((a) => a !== undefined)));
