"""The report as one self-contained HTML page: the data inline as JSON, drawn in the browser by
the page's own script into SVG (no file, font or script is fetched), with a tooltip on every
node, link, schedule cell and bar."""

from __future__ import annotations

import html
import json
from typing import Any

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2733;background:#f6f7f9}
header{background:#1d2733;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c8d0da}
nav{padding:6px 24px;background:#e8ecf1}nav a{margin-right:16px;color:#1d4e89;text-decoration:none}
section{background:#fff;margin:16px 24px;padding:12px 18px;border-radius:6px;box-shadow:0 1px 3px #0002}
section h2{margin:4px 0 10px;font-size:17px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px;border-bottom:1px solid #e3e7ec;text-align:left}
th{background:#f0f3f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#5a6675;font-size:13px}.legend span{display:inline-block;margin-right:14px}
.swatch{display:inline-block;width:28px;height:8px;margin-right:4px;vertical-align:middle}
svg{display:block;max-width:100%;height:auto;background:#fff}
#tip{position:fixed;pointer-events:none;background:#1d2733;color:#fff;padding:6px 9px;border-radius:4px;
font-size:12px;white-space:pre;display:none;z-index:10;max-width:520px}
.bad{color:#b3261e}line.route{stroke:#111 !important;stroke-width:4px !important;stroke-dasharray:6 3}
"""

SCRIPT = r"""
(function(){
const D = JSON.parse(document.getElementById('report-data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const tip = document.getElementById('tip');
function el(name, attrs, parent){const e=document.createElementNS(NS,name);
  for(const k in attrs) e.setAttribute(k, attrs[k]); if(parent) parent.appendChild(e); return e;}
function hover(e, text){e.addEventListener('mousemove', ev=>{tip.textContent=text; tip.style.display='block';
  tip.style.left=(ev.clientX+14)+'px'; tip.style.top=(ev.clientY+12)+'px';});
  e.addEventListener('mouseleave', ()=>{tip.style.display='none';}); e.setAttribute('data-tip', text);}
function ms(s){return s==null?'–':(s*1e3).toFixed(3)+' ms';}
function pct(r){return r==null?'–':(100*r).toFixed(1)+' %';}
function rate(b){return b==null?'–':(b/1e6).toFixed(2)+' MB/s';}
function heat(r){const t=Math.max(0,Math.min(1,r)); // pale blue (idle) to red (a bottleneck at Λ)
  const c=[[198,219,239],[107,174,214],[253,174,97],[215,48,39]]; const x=t*3, i=Math.min(2,Math.floor(x)), f=x-i;
  return 'rgb('+c[i].map((v,k)=>Math.round(v+(c[i+1][k]-v)*f)).join(',')+')';}
function table(parent, head, rows){const t=document.createElement('table'); const h=t.insertRow();
  head.forEach(x=>{const th=document.createElement('th'); th.textContent=x; h.appendChild(th);});
  rows.forEach(r=>{const tr=t.insertRow(); r.forEach(x=>{const td=tr.insertCell(); td.textContent=x;
    if(/^[-0-9.]/.test(String(x))) td.className='num';});}); parent.appendChild(t); return t;}

function drawNetwork(){
  const N=D.network, box=document.getElementById('network-drawing'); if(!N) return;
  const n=N.nodes.length, rows=new Set(N.nodes.map(d=>d.y)).size;
  const W=Math.max(900, Math.min(6000, 14*N.hosts)), H=Math.max(240, 110*rows);
  const svg=el('svg',{viewBox:`0 0 ${W} ${H}`,width:W,height:H,id:'network-svg'},box);
  const at={}; N.nodes.forEach(d=>{at[d.id]=[30+d.x*(W-60), 24+d.y*(H-48)];});
  const g=el('g',{class:'edges'},svg);
  N.edges.forEach(e=>{const [x1,y1]=at[e.a],[x2,y2]=at[e.b];
    const line=el('line',{x1,y1,x2,y2,stroke:heat(e.ratio),'stroke-width':e.bottleneck?4:(n>400?1:2),class:'edge'+(e.bottleneck?' bottleneck':'')},g);
    hover(line, e.links.map(l=>`${l.src} → ${l.dst} (${l.resource})\n  load ${ms(l.load_s)} = ${pct(l.ratio)} of Λ\n  capacity ${rate(l.capacity_Bps)}, ${l.slots} slot(s)`).join('\n'));});
  const r=n>400?3:6, gn=el('g',{class:'nodes'},svg), lines=g.querySelectorAll('line.edge');
  const from={}; ((N.routes||{}).transfers||[]).forEach(t=>{(from[t[0]]=from[t[0]]||[]).push(t);});
  N.nodes.forEach(d=>{const [x,y]=at[d.id];
    const c=d.kind==='host'?el('circle',{cx:x,cy:y,r,fill:'#1d4e89',class:'node host'},gn)
      :el('rect',{x:x-r*1.4,y:y-r,width:r*2.8,height:r*2,fill:'#6b7785',class:'node switch'},gn);
    const mine=from[d.id]||[];
    hover(c, `${d.kind} ${d.id}`+(mine.length?`\n${mine.length} transfer(s) from it; their routes are outlined:\n`+
      mine.slice(0,12).map(t=>`  → ${t[1]} (${t[2]} B): ${t[3].length} cable(s)`).join('\n')+(mine.length>12?'\n  …':''):''));
    if(mine.length){ // a host's routes outlined while the pointer is on it
      c.addEventListener('mouseenter',()=>{mine.forEach(t=>t[3].forEach(k=>lines[k].classList.add('route')));});
      c.addEventListener('mouseleave',()=>{lines.forEach(l=>l.classList.remove('route'));});}});
}

function drawBound(){
  const B=D.bound, box=document.getElementById('bound-table'); if(!B) return;
  table(box, ['', ''], [['traffic', B.traffic], ['transfers', B.transfers], ['bytes', B.total_bytes],
    ['duration Λ', ms(B.duration_s)], ['liquid throughput', rate(B.liquid_throughput_Bps)],
    ['bottlenecks (at Λ)', B.bottlenecks.join(', ')], ['frame bound', B.frame_lower_bound+' frames, '+ms(B.frame_bound_time_s)],
    ['limited by the frame bound', B.frame_bottlenecks.join(', ')]]);
}

function drawSchedule(){
  const S=D.schedule, box=document.getElementById('schedule-drawing'); if(!S) return;
  table(document.getElementById('schedule-table'), ['', ''], [['algorithm', S.algorithm],
    ['frames', S.frames+' (frame bound '+S.frame_bound+')'], ['time (frames model, latency excluded)', ms(S.makespan_s)+' for Λ = '+ms(S.duration_s)],
    ['liquid', String(S.liquid)], ['optimal (fewest frames, proven)', String(S.optimal)],
    ['resources drawn', S.resources.length+' of '+S.resources_used+', most loaded first']]);
  const rows=S.resources.length, cols=Math.max(1,S.frames), cw=Math.max(2,Math.min(24, 1100/cols)), ch=14, left=150;
  const W=left+cols*cw+10, H=rows*ch+30;
  const svg=el('svg',{viewBox:`0 0 ${W} ${H}`,width:W,height:H,id:'schedule-svg'},box);
  S.resources.forEach((res,i)=>{const t=el('text',{x:left-6,y:i*ch+11,'text-anchor':'end','font-size':10,
    fill:res.bottleneck?'#b3261e':'#333'},svg); t.textContent=res.name;});
  el('rect',{x:left,y:0,width:cols*cw,height:rows*ch,fill:'none',stroke:'#ccc'},svg);
  S.cells.forEach(([i,f,s])=>{const res=S.resources[i];
    const c=el('rect',{x:left+f*cw,y:i*ch+1,width:Math.max(1,cw-0.5),height:ch-2,class:'cell',
      fill:res.bottleneck?`rgba(215,48,39,${0.25+0.75*s})`:`rgba(33,113,181,${0.25+0.75*s})`},svg);
    hover(c, `frame ${f+1}, ${res.name}: ${(100*s).toFixed(0)} % of its slots in use`);});
  const lab=el('text',{x:left,y:rows*ch+22,'font-size':11,fill:'#333'},svg); lab.textContent='frames 1 – '+cols+' →';
}

function bars(box, id, groups, series, fmt){ // groups: labels; series: [{name, values, colour}]
  const W=Math.max(500, groups.length*series.length*34+120), H=240, left=50, base=200;
  const svg=el('svg',{viewBox:`0 0 ${W} ${H}`,width:W,height:H,id},box);
  const top=Math.max(1, ...series.flatMap(s=>s.values.filter(v=>v!=null)));
  [0,0.25,0.5,0.75,1].forEach(t=>{const y=base-t*180/top*top; el('line',{x1:left,x2:W,y1:base-t*180,y2:base-t*180,stroke:'#e3e7ec'},svg);
    const l=el('text',{x:left-6,y:base-t*180+4,'text-anchor':'end','font-size':10},svg); l.textContent=fmt(t*top);});
  groups.forEach((g,k)=>{const x0=left+10+k*(series.length*30+16);
    series.forEach((s,j)=>{const v=s.values[k]; if(v==null) return; const h=v/top*180;
      const b=el('rect',{x:x0+j*30,y:base-h,width:26,height:h,fill:s.colour,class:'bar'},svg);
      hover(b, `${g}, ${s.name}: ${fmt(v)}`);});
    const t=el('text',{x:x0,y:base+14,'font-size':10},svg); t.textContent=g;});
  series.forEach((s,j)=>{el('rect',{x:left+j*150,y:H-16,width:12,height:10,fill:s.colour},svg);
    const t=el('text',{x:left+16+j*150,y:H-7,'font-size':11},svg); t.textContent=s.name;});
}

function drawPredictions(){
  const P=D.predictions, box=document.getElementById('predictions-drawing'); if(!P) return;
  table(box, ['model', 'policy', 'makespan', 'of the liquid throughput'],
    P.map(p=>[p.model, p.policy, p.error?p.error:ms(p.makespan_s), p.error?'–':pct(p.ratio_to_bound)]));
  const ok=P.filter(p=>!p.error);
  bars(box, 'predictions-svg', ok.map(p=>p.model+' / '+p.policy), [{name:'predicted, share of the liquid throughput',
    values:ok.map(p=>p.ratio_to_bound), colour:'#6baed6'}], v=>(100*v).toFixed(0)+' %');
}

function drawMeasured(){
  const M=D.measured, box=document.getElementById('measured-drawing'); if(!M) return;
  table(box, ['', ''], [['measured on', (M.network||'?')+(M.network_note?' — '+M.network_note:'')],
    ['MPI library', M.mpi_library||'?'], ['schedule', M.algorithm||'?'], ['liquid throughput', rate(M.liquid_throughput_Bps)]]);
  if(M.modes){
    table(box, ['mode','median','min – max','of the liquid throughput','predicted'],
      M.modes.map(m=>[m.mode, ms(m.median_s), ms(m.min_s)+' – '+ms(m.max_s), pct(m.ratio_to_bound), pct(m.predicted_ratio_to_bound)]));
    bars(box, 'measured-svg', M.modes.map(m=>m.mode), [
      {name:'measured', values:M.modes.map(m=>m.ratio_to_bound), colour:'#2171b5'},
      {name:'predicted', values:M.modes.map(m=>m.predicted_ratio_to_bound), colour:'#bdd7e7'}], v=>(100*v).toFixed(0)+' %');
  } else if(M.sizes){
    const modes=[...new Set(M.sizes.flatMap(s=>s.modes.map(m=>m.mode)))];
    table(box, ['bytes per transfer', ...modes.map(m=>m+' (median)')], M.sizes.map(s=>[s.size_bytes,
      ...modes.map(m=>{const x=s.modes.find(y=>y.mode===m); return x?ms(x.median_s)+' ('+pct(x.ratio_to_bound)+')':'–';})]));
    lines(box, M.sizes, modes);
  }
}

function lines(box, sizes, modes){ // time per size and mode, log-log
  const W=760, H=320, L=70, R=150, T=10, B=40, colours=['#2171b5','#d94801','#238b45','#6a51a3','#b3261e','#525252','#ce1256'];
  const xs=sizes.map(s=>s.size_bytes), ys=sizes.flatMap(s=>s.modes.map(m=>m.median_s)).filter(v=>v>0);
  const lx=v=>Math.log10(v), x0=lx(Math.min(...xs)), x1=lx(Math.max(...xs))+1e-9, y0=lx(Math.min(...ys)), y1=lx(Math.max(...ys))+1e-9;
  const X=v=>L+(lx(v)-x0)/(x1-x0)*(W-L-R), Y=v=>H-B-(lx(v)-y0)/(y1-y0)*(H-T-B);
  const svg=el('svg',{viewBox:`0 0 ${W} ${H}`,width:W,height:H,id:'sizes-svg'},box);
  el('rect',{x:L,y:T,width:W-L-R,height:H-T-B,fill:'none',stroke:'#ccc'},svg);
  modes.forEach((m,k)=>{const pts=sizes.map(s=>[s.size_bytes,(s.modes.find(y=>y.mode===m)||{}).median_s]).filter(p=>p[1]>0);
    el('polyline',{points:pts.map(p=>X(p[0])+','+Y(p[1])).join(' '),fill:'none',stroke:colours[k%7],'stroke-width':2},svg);
    pts.forEach(p=>{const c=el('circle',{cx:X(p[0]),cy:Y(p[1]),r:3.5,fill:colours[k%7],class:'point'},svg);
      hover(c, `${m}, ${p[0]} bytes: ${ms(p[1])}`);});
    el('rect',{x:W-R+10,y:T+k*16,width:12,height:8,fill:colours[k%7]},svg);
    const t=el('text',{x:W-R+26,y:T+8+k*16,'font-size':11},svg); t.textContent=m;});
  const xl=el('text',{x:L,y:H-8,'font-size':11},svg); xl.textContent='bytes per transfer (log) →';
  const yl=el('text',{x:4,y:T+10,'font-size':11},svg); yl.textContent='time (log)';
}

[drawNetwork, drawBound, drawSchedule, drawPredictions, drawMeasured].forEach(f=>{
  try{f();}catch(e){console.error('report: '+f.name+': '+e);}});
document.body.setAttribute('data-ready','1');
})();
"""

SECTIONS = (("network", "Network and bottlenecks", "network-drawing",
             "Each line is a cable, coloured by the more loaded of its directions against Λ (pale: idle, red: "
             "a bottleneck at Λ); bottlenecks are drawn thick. Hover a cable for each direction's load, capacity "
             "and slots; hover a host to outline the routes of its transfers."),
            ("bound", "Bound", "bound-table", "Λ is the largest load of a resource; no schedule finishes before it."),
            ("schedule", "Schedule: frames × resources", "schedule-drawing",
             "A cell is shaded by the share of the resource's slots in use in that frame; bottlenecks in red, "
             "at the top."),
            ("predictions", "Predictions", "predictions-drawing", "The simulators' makespan of the schedule, route latency included (Λ excludes it)."),
            ("measured", "Measured", "measured-drawing", "What the run measured, mode by mode, beside the prediction."))


def render_page(title: str, subtitle: str, data: dict[str, Any]) -> str:
    """The page for ``data`` (:func:`liquidsched.report.report_data`): a section for each part
    the data holds.

    Examples
    --------
    >>> page = render_page("t", "s", {"bound": None})
    >>> page.startswith("<!DOCTYPE html>") and 'id="report-data"' in page and "http" not in page.split("<body")[0]
    True
    """
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    shown = [s for s in SECTIONS if data.get(s[0]) is not None]
    nav = "".join(f'<a href="#{key}">{html.escape(name)}</a>' for key, name, _, _ in shown)
    body = []
    for key, name, box, note in shown:
        extra = '<div id="schedule-table"></div>' if key == "schedule" else ""
        body.append(f'<section id="{key}"><h2>{html.escape(name)}</h2><p class="note">{html.escape(note)}</p>'
                    f'{extra}<div id="{box}"></div></section>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>'
            f'<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p></header><nav>{nav}</nav>'
            f'{"".join(body)}<div id="tip"></div>'
            f'<script type="application/json" id="report-data">{payload}</script>'
            f'<script>{SCRIPT}</script></body></html>\n')
