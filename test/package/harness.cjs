// Runs the package Zapier runs, as Zapier runs it: under Node 22, the built
// zip unpacked into a folder of its own, every invocation through the zip's
// own zapierwrapper.js handler. The test sends events over the IPC channel
// ({seq, event}) and reads back {seq, ok, results} or {seq, ok: false, name,
// message}; stdout stays free for whatever core prints.
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const AdmZip = require('adm-zip');

const [zipPath] = process.argv.slice(2);
// Outside the project, so nothing the zip lacks can be found in the project's node_modules.
const dir = mkdtempSync(join(tmpdir(), 'auction-zip-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
new AdmZip(zipPath).extractAllTo(dir, true);
const { handler } = require(join(dir, 'zapierwrapper.js'));

process.on('message', (message) => {
  const { seq, event } = message;
  Promise.resolve()
    .then(() => handler(event))
    .then(
      (output) => process.send({ seq, ok: true, results: output.results }),
      (error) =>
        process.send({
          seq,
          ok: false,
          name: String((error && error.name) || 'Error'),
          message: String(error && error.message),
        }),
    );
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true, node: process.version, dir });
