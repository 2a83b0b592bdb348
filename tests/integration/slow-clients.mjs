// Slow clients for test-slow-clients.sh (Node ≥ 18, `net` only): COUNT connections
// from 127.0.0.1 to PORT, each sending a request line and then one header line every
// TRICKLE_MS, never finishing its headers (slowloris). Prints one JSON line of counts
// every 250 ms and a final one when every connection is closed or after MAX_S seconds:
//   {t, opened, open, closed, quick, answered408, answeredOther, errors}
// quick = closed by the server within 1 s of opening without any answer (refused at
// accept by the per-client limit); answered408 = closed after a 408 (the header deadline).
import net from 'node:net';

const [port, count, path, trickleMs = '500', maxS = '30'] = process.argv.slice(2);
if (!port || !count || !path) {
        console.error('usage: node slow-clients.mjs PORT COUNT PATH [TRICKLE_MS] [MAX_S]');
        process.exit(2);
}
const t0 = Date.now();
const s = { opened: 0, open: 0, closed: 0, quick: 0, answered408: 0, answeredOther: 0, errors: 0 };

function one() {
        const started = Date.now();
        let answer = '';
        let timer = null;
        const c = net.connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.1' });
        c.on('connect', () => {
                s.opened++;
                s.open++;
                c.write(`GET ${path} HTTP/1.1\r\nHost: slow\r\n`);
                timer = setInterval(() => c.write('X-Slow: 1\r\n'), Number(trickleMs));
        });
        c.on('data', (d) => { answer += d.toString('latin1'); });
        c.on('error', () => { s.errors++; });
        c.on('close', () => {
                if (timer) clearInterval(timer);
                if (s.open > 0 && timer) s.open--;
                s.closed++;
                if (answer.startsWith('HTTP/1.1 408 ')) s.answered408++;
                else if (answer) s.answeredOther++;
                else if (Date.now() - started < 1000) s.quick++;
        });
}

for (let i = 0; i < Number(count); i++) one();

const report = () => console.log(JSON.stringify({ t: (Date.now() - t0) / 1000, ...s }));
const tick = setInterval(() => {
        report();
        if (s.closed >= Number(count) || Date.now() - t0 > Number(maxS) * 1000) {
                clearInterval(tick);
                process.exit(0);
        }
}, 250);
