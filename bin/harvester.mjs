#!/usr/bin/env node
// The `harvester` CLI. TypeScript sources run through tsx's loader, so there is no build step.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../lib/cli/main.ts');
process.exitCode = await runCli(process.argv);
