//! Tiny HTTP/1.1 servers on 127.0.0.1 for the transport tests: one that records requests and
//! answers from a closure, one that accepts connections and never answers. Their threads live
//! until the test process exits (nothing outside the process is started).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as received.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, values as sent.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    /// Form field of an `application/x-www-form-urlencoded` body.
    pub fn form(&self, key: &str) -> Option<String> {
        self.body.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == key).then(|| percent_decode(v))
        })
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

type Responder = dyn Fn(&Recorded) -> (u16, String) + Send + Sync;

/// Records every request; answers `(status, JSON body)` from the responder, then closes.
pub struct RecordingServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl RecordingServer {
    pub fn start(responder: impl Fn(&Recorded) -> (u16, String) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let responder: Arc<Responder> = Arc::new(responder);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let recorded = Arc::clone(&recorded);
                let responder = Arc::clone(&responder);
                std::thread::spawn(move || serve(stream, &recorded, &*responder));
            }
        });
        RecordingServer { url, requests }
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }
}

fn serve(stream: TcpStream, recorded: &Mutex<Vec<Recorded>>, responder: &Responder) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let mut req = Recorded {
        method: parts.next().unwrap_or("").to_string(),
        path: parts.next().unwrap_or("").to_string(),
        ..Recorded::default()
    };
    let mut content_length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let k = k.trim().to_ascii_lowercase();
            let v = v.trim().to_string();
            if k == "content-length" {
                content_length = v.parse().unwrap_or(0);
            }
            req.headers.push((k, v));
        }
    }
    let mut body = vec![0u8; content_length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    req.body = String::from_utf8_lossy(&body).into_owned();
    let (status, answer) = responder(&req);
    recorded.lock().expect("lock").push(req);
    let mut stream = reader.into_inner();
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        answer.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.flush();
}

/// Accepts connections and never answers (holds them open).
pub struct SilentServer {
    pub url: String,
}

impl SilentServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
            }
        });
        SilentServer { url }
    }
}

/// A loopback URL where nothing listens (connection refused).
pub fn dead_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    format!("http://{addr}")
}
