/**
 * A self-contained API reference page at /api/docs (no CDN is reachable): it fetches /api/openapi.json and renders
 * every operation with its parameters, request body and responses. Small on purpose — a reader, not an IDE.
 */
/** The page's one inline script; its hash is what the page's Content-Security-Policy allows (see corral-server.ts). */
export const API_DOCS_SCRIPT = `
const esc=s=>String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
function resolve(doc,s){while(s&&s.$ref){s=s.$ref.split('/').slice(1).reduce((o,k)=>o&&o[k],doc)}return s}
function render(doc){
  document.getElementById('sub').textContent=(doc.info.description||'')+' — version '+doc.info.version;
  const out=[];
  for(const [path,ops] of Object.entries(doc.paths||{}))for(const [method,op] of Object.entries(ops)){
    const M=method.toUpperCase(),params=(op.parameters||[]).map(p=>'<tr><td><code>'+esc(p.name)+'</code></td><td>'+esc(p.in)+'</td><td>'+(p.required?'yes':'')+'</td><td>'+esc(p.description||'')+'</td></tr>').join('');
    const media=op.requestBody?Object.entries(op.requestBody.content||{})[0]:undefined;
    const body=media?'<h3>Request body <code>'+esc(media[0])+'</code></h3><pre>'+esc(JSON.stringify(resolve(doc,media[1].schema)||{},null,2))+'</pre>':'';
    const resp=Object.entries(op.responses||{}).map(([c,r])=>{const s=r.content&&r.content['application/json']?resolve(doc,r.content['application/json'].schema):null;return '<h3>'+esc(c)+' '+esc(r.description||'')+'</h3>'+(s?'<pre>'+esc(JSON.stringify(s,null,2))+'</pre>':'')}).join('');
    out.push({key:(path+' '+(op.summary||'')).toLowerCase(),html:'<details><summary><span class="m '+M+'">'+M+'</span><code>/api'+esc(path)+'</code><span>'+esc(op.summary||'')+'</span></summary><div class="body">'+(params?'<h3>Parameters</h3><table><tr><th>name</th><th>in</th><th>required</th><th>description</th></tr>'+params+'</table>':'')+body+resp+'</div></details>'});
  }
  const draw=()=>{const q=document.getElementById('q').value.toLowerCase();document.getElementById('ops').innerHTML=out.filter(o=>o.key.includes(q)).map(o=>o.html).join('')};
  document.getElementById('q').oninput=draw;draw();
}
fetch('/api/openapi.json').then(r=>r.json()).then(render,e=>{document.getElementById('ops').textContent='Cannot load the spec: '+e});
`;

export const API_DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Corral API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<style>
body{font:14px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1f2937;color:#fff;padding:14px 24px}header h1{margin:0;font-size:18px}
main{max-width:1100px;margin:0 auto;padding:16px 24px}
details{background:#fff;border:1px solid #d9dde3;border-radius:6px;margin:8px 0}
summary{cursor:pointer;padding:8px 12px;display:flex;gap:12px;align-items:center}
.m{font:600 12px monospace;padding:2px 8px;border-radius:4px;color:#fff;min-width:56px;text-align:center}
.GET{background:#2563eb}.POST{background:#16a34a}.DELETE{background:#dc2626}.PUT,.PATCH{background:#d97706}
code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#f1f3f5;padding:8px;overflow:auto;border-radius:4px}
.body{padding:4px 16px 12px}h3{font-size:13px;margin:10px 0 4px}table{border-collapse:collapse}td,th{border:1px solid #e2e5e9;padding:3px 8px;text-align:left}
input{padding:6px 8px;width:320px;border:1px solid #c8cdd4;border-radius:4px}
</style></head><body>
<header><h1>Corral API reference</h1><div id="sub"></div></header>
<main><p><input id="q" placeholder="filter by path or summary"> · <a href="/api/openapi.json">openapi.json</a></p><div id="ops">Loading…</div></main>
<script>${API_DOCS_SCRIPT}</script></body></html>`;
