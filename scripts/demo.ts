/** `npm run demo`: the main job on the emulator; exits non-zero if any check fails. */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { runDemo } = await import('../tools/demo/demo.js');
const checks = await runDemo({
  ...(process.env.DEMO_ENTITIES ? { entities: Number(process.env.DEMO_ENTITIES) } : {}),
});
const failed = checks.filter((c) => !c.ok);
if (failed.length > 0) {
  console.error(`demo: ${failed.length} check(s) failed: ${failed.map((c) => c.name).join(', ')}`);
  process.exit(1);
}
console.log('demo: all checks passed');
process.exit(0);
