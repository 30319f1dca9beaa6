#!/usr/bin/env node
// The `harvester` CLI. TypeScript sources run through tsx's loader, so there is no build step.
import { register } from 'tsx/esm/api';

// The SDK's notice that releases after January 2027 need Node 22; the lockfile pins ours.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { runCli } = await import('../lib/cli/main.ts');
process.exitCode = await runCli(process.argv);
