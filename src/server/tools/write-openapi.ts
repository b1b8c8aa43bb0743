/** `npm run openapi`: regenerate docs/openapi.json from the procedures (a test fails when it drifts). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../openapi';

const target = fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);
