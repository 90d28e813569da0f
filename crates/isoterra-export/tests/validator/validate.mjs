// Validates one .glb file with the Khronos glTF validator.
// Usage: node validate.mjs FILE.glb
// Prints the validation report as JSON on stdout; exits 0 when the report has
// no errors, 1 when it has errors, 2 when the file cannot be read or validated.
import { readFile } from 'node:fs/promises';
import validator from 'gltf-validator';

const path = process.argv[2];
if (!path) {
  console.error('usage: node validate.mjs FILE.glb');
  process.exit(2);
}

try {
  const bytes = new Uint8Array(await readFile(path));
  const report = await validator.validateBytes(bytes, {
    uri: path,
    maxIssues: 0,
    writeTimestamp: false,
  });
  console.log(JSON.stringify(report, null, 2));
  const errors = report.issues.numErrors;
  const warnings = report.issues.numWarnings;
  console.error(`gltf-validator: ${errors} error(s), ${warnings} warning(s)`);
  process.exit(errors > 0 ? 1 : 0);
} catch (err) {
  console.error(`gltf-validator failed: ${err?.stack ?? err}`);
  process.exit(2);
}
