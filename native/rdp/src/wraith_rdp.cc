// Wraith RDP addon: FreeRDP 2.x / 3.x client sessions exposed through Node-API.
//
// Threading model
//   * Every session owns one native thread. Only that thread ever calls into the
//     freerdp instance (connect, event loop, input, disconnect, free).
//   * The JS thread talks to the session thread through a mutex-guarded input
//     queue plus a WinPR event the session thread waits on together with
//     FreeRDP's own event handles.
//   * The session thread talks back through ONE thread-safe function and a
//     "call pending" flag: whatever happened (frames, resize, connect result,
//     close) is merged into shared state and at most one JS call is queued.
//     A slow JS side therefore never grows a queue; dirty rectangles are merged
//     into a region and copied out when JS finally runs.
//   * Buffers handed to JS are copies (Electron refuses external buffers).

#include <napi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#if WRAITH_HAVE_OPENSSL
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/evp.h>
#endif

#include <winpr/synch.h>
#include <winpr/wlog.h>
#include <freerdp/freerdp.h>
#include <freerdp/client.h>
#include <freerdp/client/cmdline.h>
#include <freerdp/channels/rdpgfx.h>
#include <freerdp/client/rdpgfx.h>
#include <freerdp/event.h>
#include <freerdp/gdi/gfx.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/codec/region.h>
#include <freerdp/codec/h264.h>
#include <freerdp/error.h>
#include <freerdp/input.h>
#include <freerdp/scancode.h>
#include <freerdp/settings.h>
#include <freerdp/version.h>

#if FREERDP_VERSION_MAJOR >= 3
#define WR_FRDP3 1
#else
#define WR_FRDP3 0
#endif

namespace {

// ---------------------------------------------------------------------------
// Logging: WLog → JS (or nowhere). Installed once per process.

std::mutex g_logMu;
Napi::ThreadSafeFunction g_logTsfn;
bool g_logActive = false;
napi_env g_logEnv = nullptr;  // the env that owns g_logTsfn
std::atomic<bool> g_wlogInstalled{false};

struct LogLine {
  uint32_t level;
  std::string tag;
  std::string text;
};

BOOL WlogMessage(const wLogMessage* msg) {
  if (!msg) return TRUE;
  std::lock_guard<std::mutex> lk(g_logMu);
  if (!g_logActive) return TRUE;
  auto* line = new LogLine{msg->Level, msg->PrefixString ? msg->PrefixString : "",
                           msg->TextString ? msg->TextString : ""};
  napi_status st = g_logTsfn.NonBlockingCall(line, [](Napi::Env env, Napi::Function fn, LogLine* l) {
    if (env != nullptr && fn != nullptr) {
      fn.Call({Napi::Number::New(env, l->level), Napi::String::New(env, l->tag),
               Napi::String::New(env, l->text)});
    }
    delete l;
  });
  if (st != napi_ok) delete line;  // queue full or closing: drop the line
  return TRUE;
}
BOOL WlogOther(const wLogMessage*) { return TRUE; }

wLogCallbacks g_wlogCallbacks;  // filled by name below: member order differs across WinPR versions

void InstallWlog(DWORD level) {
  wLog* root = WLog_GetRoot();
  if (!g_wlogInstalled.exchange(true)) {
    memset(&g_wlogCallbacks, 0, sizeof(g_wlogCallbacks));
    g_wlogCallbacks.message = WlogMessage;
    g_wlogCallbacks.data = WlogOther;
    g_wlogCallbacks.image = WlogOther;
    g_wlogCallbacks.package = WlogOther;
    WLog_SetLogAppenderType(root, WLOG_APPENDER_CALLBACK);
    wLogAppender* app = WLog_GetLogAppender(root);
    WLog_ConfigureAppender(app, "callbacks", &g_wlogCallbacks);
    wLogLayout* layout = WLog_GetLogLayout(root);
    if (layout) WLog_Layout_SetPrefixFormat(root, layout, "%mn");
  }
  WLog_SetLogLevel(root, level);
}

// ---------------------------------------------------------------------------
// Session state shared by the JS thread and the session thread.

enum class InputKind { Key, Unicode, Mouse, ExtMouse, CtrlAltDel };

struct InputEv {
  InputKind kind;
  uint32_t code;  // scancode (0xE0xx = extended) / UTF-16 unit / pointer flags
  bool down;
  uint16_t x, y;
};

struct ErrInfo {
  std::string code;
  std::string message;
  std::string freerdpError;  // FreeRDP's own error name, for logs
  // certificate details
  bool cert = false;
  std::string host;
  uint32_t port = 0;
  std::string fingerprint;
  std::string subject;
  std::string issuer;
  std::string commonName;
};

struct Options {
  std::string host;
  uint32_t port = 3389;
  std::string username, password, domain;
  bool hasUser = false, hasPassword = false, hasDomain = false;
  uint32_t width = 1280, height = 800;
  std::string security = "auto";
  bool ignoreCertificate = false;
  std::string trustedFingerprint;
  std::string configDir;
  uint32_t timeoutMs = 15000;
  bool gfx = true;   // graphics pipeline (rdpgfx) when the server offers it
  bool h264 = true;  // offer AVC444/AVC420 in the pipeline when FreeRDP can decode H.264
};

// Counters for tests and benchmarks (getStats()). Written on FreeRDP's threads.
struct Stats {
  std::atomic<uint64_t> paints{0};       // EndPaint with something invalid (what xfreerdp draws)
  std::atomic<uint64_t> deliveries{0};   // calls into JS carrying frames
  std::atomic<bool> gfxActive{false};    // rdpgfx channel connected and handed to GDI
  std::atomic<bool> h264Offered{false};  // AVC was advertised (option on and a decoder exists)
  std::atomic<uint64_t> gfxFrames{0};    // RDPGFX EndFrame PDUs
  std::atomic<uint64_t> gfxCommands[16] = {};  // RDPGFX surface commands by codec id (0..15)
};

class Session;
class RdpSessionWrap;
void CallDeliver(Napi::Env env, Napi::Function fn, RdpSessionWrap* wrap, void* data);
using SessionTsfn = Napi::TypedThreadSafeFunction<RdpSessionWrap, void, CallDeliver>;

struct WraithContext {
  rdpClientContext common;
  Session* session;
};

class Session {
 public:
  Options opts;

  std::mutex mu;
  // input (mu)
  std::deque<InputEv> inputs;
  HANDLE inputEvent = nullptr;
  std::atomic<bool> stopRequested{false};
  freerdp* instance = nullptr;  // (mu) alive while the session thread owns it

  // framebuffer mirror (mu)
  std::vector<uint8_t> back;
  uint32_t fbW = 0, fbH = 0;
  bool unicodeInput = false;  // server accepts Unicode keyboard events
  REGION16 dirty;
  bool resized = false;
  bool callPending = false;

  // lifecycle (mu)
  bool connectReported = false;
  bool connectDone = false;
  bool connectOk = false;
  ErrInfo connectErr;
  bool closedDone = false;
  ErrInfo closeInfo;
  std::string logonInfo;

  // set only on the session thread
  ErrInfo certErr;
  bool certRejected = false;
  bool tlsReached = false;  // a certificate was presented: TCP and TLS worked

  SessionTsfn tsfn;
  bool tsfnUsable = true;  // (mu) false once env teardown started

  Stats stats;
  // GDI's RDPGFX handlers, wrapped to count what the server sends (rdpgfx channel thread).
  pcRdpgfxSurfaceCommand gdiSurfaceCommand = nullptr;
  pcRdpgfxEndFrame gdiEndFrame = nullptr;

  Session() { region16_init(&dirty); }
  ~Session() {
    region16_uninit(&dirty);
    if (inputEvent) CloseHandle(inputEvent);
  }

  // mu must be held.
  void NotifyLocked() {
    if (callPending || !tsfnUsable) return;
    if (tsfn.NonBlockingCall() == napi_ok) callPending = true;
  }

  void Push(const InputEv& ev) {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!instance || !connectDone || !connectOk) return;
      if (inputs.size() >= 65536) return;  // runaway producer: drop
      inputs.push_back(ev);
    }
    SetEvent(inputEvent);
  }

  void RequestStop() {
    stopRequested = true;
    std::lock_guard<std::mutex> lk(mu);
    // The one FreeRDP call made off the session thread: while freerdp_connect() blocks,
    // nothing else can interrupt it. It only records CONNECT_CANCELLED and sets an event.
    // Once connected the session thread's own wait includes inputEvent.
    if (instance && !connectDone) {
#if WR_FRDP3
      freerdp_abort_connect_context(instance->context);
#else
      freerdp_abort_connect(instance);
#endif
    }
    if (inputEvent) SetEvent(inputEvent);
  }

  void Run();  // session thread body

  // mu must be held. The session is over: free the mirror now rather than when GC
  // finalizes the JS wrapper (which may be much later).
  void ReleaseFramebufferLocked() {
    std::vector<uint8_t>().swap(back);
    fbW = fbH = 0;
    region16_clear(&dirty);
  }

 private:
  bool ApplySettings(rdpContext* ctx);
  void DrainInput(rdpContext* ctx);
  ErrInfo MapConnectError(rdpContext* ctx);
  ErrInfo MapCloseReason(rdpContext* ctx, bool transportError);
};

// ---------------------------------------------------------------------------
// FreeRDP callbacks (all run on the session thread).

Session* SessionOf(rdpContext* ctx) { return reinterpret_cast<WraithContext*>(ctx)->session; }

std::string Lower(std::string s) {
  for (auto& c : s) c = (char)tolower((unsigned char)c);
  return s;
}

[[maybe_unused]] std::string HexColon(const unsigned char* d, unsigned n) {
  static const char* hx = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; i++) {
    if (i) out.push_back(':');
    out.push_back(hx[d[i] >> 4]);
    out.push_back(hx[d[i] & 15]);
  }
  return out;
}

// FreeRDP hands either a colon-separated SHA-256 fingerprint or (when
// VERIFY_CERT_FLAG_FP_IS_PEM is set) the certificate PEM. Normalise to the former.
std::string NormaliseFingerprint(const char* fp, DWORD flags) {
  if (!fp) return "";
#ifdef VERIFY_CERT_FLAG_FP_IS_PEM
  if (flags & VERIFY_CERT_FLAG_FP_IS_PEM) {
#if !WRAITH_HAVE_OPENSSL
    return "";  // cannot hash without OpenSSL: never matches, so never silently trusted
#else
    BIO* bio = BIO_new_mem_buf(fp, -1);
    if (!bio) return "";
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (!x) return "";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    std::string out;
    if (X509_digest(x, EVP_sha256(), md, &n)) out = HexColon(md, n);
    X509_free(x);
    return out;
#endif
  }
#endif
  return Lower(fp);
}

DWORD DecideCertificate(Session* s, const char* host, UINT16 port, const char* cn, const char* subject,
                        const char* issuer, const char* fingerprint, DWORD flags) {
  s->tlsReached = true;
  if (s->opts.ignoreCertificate) return 2;  // accept for this session only
  std::string fp = NormaliseFingerprint(fingerprint, flags);
  std::string trusted = Lower(s->opts.trustedFingerprint);
  if (!fp.empty() && !trusted.empty() && fp == trusted) return 2;
  ErrInfo e;
  e.cert = true;
  if (trusted.empty()) {
    e.code = "ECERT_UNKNOWN";
    e.message = "The server's certificate is not trusted yet. Check the fingerprint and trust it to connect.";
  } else {
    e.code = "ECERT_CHANGED";
    e.message = "The server's certificate changed since it was trusted. This can mean an attack; the connection was blocked.";
  }
  e.host = host ? host : "";
  e.port = port;
  e.fingerprint = fp;
  e.subject = subject ? subject : "";
  e.issuer = issuer ? issuer : "";
  e.commonName = cn ? cn : "";
  s->certErr = e;
  s->certRejected = true;
  return 0;
}

DWORD CbVerifyCertificateEx(freerdp* instance, const char* host, UINT16 port, const char* common_name,
                            const char* subject, const char* issuer, const char* fingerprint, DWORD flags) {
  return DecideCertificate(SessionOf(instance->context), host, port, common_name, subject, issuer, fingerprint,
                           flags);
}

DWORD CbVerifyChangedCertificateEx(freerdp* instance, const char* host, UINT16 port, const char* common_name,
                                   const char* subject, const char* issuer, const char* new_fingerprint,
                                   const char* old_subject, const char* old_issuer, const char* old_fingerprint,
                                   DWORD flags) {
  // FreeRDP's own store disagreed; our trust decision is still only the caller's fingerprint.
  return DecideCertificate(SessionOf(instance->context), host, port, common_name, subject, issuer,
                           new_fingerprint, flags);
}

bool HaveCredentials(Session* s) { return s->opts.hasUser && !s->opts.username.empty() && s->opts.hasPassword; }

#if WR_FRDP3
BOOL CbAuthenticateEx(freerdp* instance, char** username, char** password, char** domain, rdp_auth_reason reason) {
  Session* s = SessionOf(instance->context);
  if (reason == AUTH_NLA || reason == GW_AUTH_HTTP || reason == GW_AUTH_RDG || reason == GW_AUTH_RPC) {
    // Never prompt on stdin. Credentials come from the options or not at all.
    return HaveCredentials(s) ? TRUE : FALSE;
  }
  return TRUE;  // TLS/RDP security: proceed without prompting
}
#else
BOOL CbAuthenticate(freerdp* instance, char** username, char** password, char** domain) {
  return HaveCredentials(SessionOf(instance->context)) ? TRUE : FALSE;
}
#endif

int CbLogonErrorInfo(freerdp* instance, UINT32 data, UINT32 type) {
  Session* s = SessionOf(instance->context);
  const char* t = freerdp_get_logon_error_info_type(type);
  const char* d = freerdp_get_logon_error_info_data(data);
  std::lock_guard<std::mutex> lk(s->mu);
  s->logonInfo = std::string(t ? t : "") + (d ? std::string(" ") + d : "");
  return 1;
}

// GDI draws in BGRX, FreeRDP's native order: pipeline surfaces are always BGRX/BGRA (its
// H.264 YUV→RGB has SIMD paths only for those), and copying them to an RGBA primary buffer
// goes through freerdp_image_copy's per-pixel conversion: 9.2 ms per 1600x900 frame against
// 0.17 ms for the same format (FreeRDP 2.11, measured). JS wants RGBA with opaque alpha, so
// the copy into the back buffer swaps R and B and sets alpha (the compiler vectorises it).
inline void BgrxToRgba(uint8_t* dst, const uint8_t* src, size_t pixels) {
  for (size_t i = 0; i < pixels; i++) {
    uint32_t v;
    memcpy(&v, src + i * 4, 4);
    v = 0xFF000000u | (v & 0x0000FF00u) | ((v & 0x000000FFu) << 16) | ((v >> 16) & 0x000000FFu);
    memcpy(dst + i * 4, &v, 4);
  }
}

// Copy the listed rectangles from the GDI surface into the back buffer and the dirty region.
void MirrorRects(Session* s, rdpGdi* gdi, const RECTANGLE_16* rects, size_t n) {
  std::lock_guard<std::mutex> lk(s->mu);
  if (s->fbW != (uint32_t)gdi->width || s->fbH != (uint32_t)gdi->height) return;
  const uint32_t dstStride = s->fbW * 4;
  for (size_t i = 0; i < n; i++) {
    RECTANGLE_16 r = rects[i];
    if (r.right > s->fbW) r.right = (UINT16)s->fbW;
    if (r.bottom > s->fbH) r.bottom = (UINT16)s->fbH;
    if (r.left >= r.right || r.top >= r.bottom) continue;
    const size_t rowPixels = (size_t)(r.right - r.left);
    for (uint32_t y = r.top; y < r.bottom; y++) {
      BgrxToRgba(&s->back[(size_t)y * dstStride + (size_t)r.left * 4],
                 gdi->primary_buffer + (size_t)y * gdi->stride + (size_t)r.left * 4, rowPixels);
    }
    region16_union_rect(&s->dirty, &s->dirty, &r);
  }
  s->NotifyLocked();
}

void ResetBackBuffer(Session* s, rdpGdi* gdi) {
  std::lock_guard<std::mutex> lk(s->mu);
  s->fbW = (uint32_t)gdi->width;
  s->fbH = (uint32_t)gdi->height;
  s->back.assign((size_t)s->fbW * s->fbH * 4, 0);
  for (uint32_t y = 0; y < s->fbH; y++)
    BgrxToRgba(&s->back[(size_t)y * s->fbW * 4], gdi->primary_buffer + (size_t)y * gdi->stride, s->fbW);
  region16_clear(&s->dirty);
  RECTANGLE_16 full = {0, 0, (UINT16)s->fbW, (UINT16)s->fbH};
  region16_union_rect(&s->dirty, &s->dirty, &full);
  s->resized = true;
  s->NotifyLocked();
}

BOOL CbBeginPaint(rdpContext* ctx) {
  rdpGdi* gdi = ctx->gdi;
  if (!gdi || !gdi->primary || !gdi->primary->hdc || !gdi->primary->hdc->hwnd) return FALSE;
  HGDI_WND hwnd = gdi->primary->hdc->hwnd;
  hwnd->invalid->null = TRUE;
  hwnd->ninvalid = 0;
  return TRUE;
}

BOOL CbEndPaint(rdpContext* ctx) {
  rdpGdi* gdi = ctx->gdi;
  if (!gdi || !gdi->primary || !gdi->primary->hdc || !gdi->primary->hdc->hwnd) return FALSE;
  HGDI_WND hwnd = gdi->primary->hdc->hwnd;
  if (hwnd->invalid->null) return TRUE;
  const INT32 n = hwnd->ninvalid;
  std::vector<RECTANGLE_16> rects;
  rects.reserve(n > 0 ? (size_t)n : 1);
  auto add = [&](INT32 x, INT32 y, INT32 w, INT32 h) {
    if (w <= 0 || h <= 0) return;
    INT32 l = std::max(0, x), t = std::max(0, y);
    INT32 r = std::min(gdi->width, x + w), b = std::min(gdi->height, y + h);
    if (l >= r || t >= b) return;
    rects.push_back(RECTANGLE_16{(UINT16)l, (UINT16)t, (UINT16)r, (UINT16)b});
  };
  if (n > 0 && hwnd->cinvalid) {
    for (INT32 i = 0; i < n; i++) add(hwnd->cinvalid[i].x, hwnd->cinvalid[i].y, hwnd->cinvalid[i].w, hwnd->cinvalid[i].h);
  } else {
    add(hwnd->invalid->x, hwnd->invalid->y, hwnd->invalid->w, hwnd->invalid->h);
  }
  if (!rects.empty()) {
    Session* s = SessionOf(ctx);
    s->stats.paints++;
    MirrorRects(s, gdi, rects.data(), rects.size());
  }
  hwnd->invalid->null = TRUE;
  hwnd->ninvalid = 0;
  return TRUE;
}

// The update lock: FreeRDP holds it while anything paints into the primary buffer, on the
// connection thread (legacy updates) and on the rdpgfx thread (update_begin_paint at EndFrame).
void LockUpdate(rdpUpdate* update) {
#if WR_FRDP3
  rdp_update_lock(update);
#else
  EnterCriticalSection(&update->mux);
#endif
}

void UnlockUpdate(rdpUpdate* update) {
#if WR_FRDP3
  rdp_update_unlock(update);
#else
  LeaveCriticalSection(&update->mux);
#endif
}

// A server resize arrives on two threads: the connection thread (deactivate/reactivate) and,
// with the graphics pipeline, the rdpgfx thread (ResetGraphics). gdi_resize frees and
// reallocates the primary buffer, so without the update lock one thread freed it while the other
// painted into it ("double free or corruption" within 40 resizes under repaints; the CI run that
// crashed in the resize test). The lock is recursive, and taking it after rdpgfx's own lock is
// the order FreeRDP uses itself.
BOOL CbDesktopResize(rdpContext* ctx) {
  rdpGdi* gdi = ctx->gdi;
  rdpSettings* settings = ctx->settings;
  if (!gdi || !ctx->update) return FALSE;
  LockUpdate(ctx->update);
  const BOOL ok = gdi_resize(gdi, freerdp_settings_get_uint32(settings, FreeRDP_DesktopWidth),
                             freerdp_settings_get_uint32(settings, FreeRDP_DesktopHeight));
  if (ok) ResetBackBuffer(SessionOf(ctx), gdi);
  UnlockUpdate(ctx->update);
  return ok;
}

#if WR_FRDP3
#define WR_EVT_CONST const
#else
#define WR_EVT_CONST
#endif

// With the graphics pipeline the server's frames arrive on the rdpgfx channel (drdynvc's
// thread in FreeRDP): GDI decodes them into its surfaces and, at each EndFrame, copies the
// surfaces to the primary buffer between update->BeginPaint and EndPaint (update_begin_paint
// holds update->mux), so CbEndPaint sees the invalid region exactly as on the legacy path.
// These wrappers only count, for getStats(); GDI does the work.
Session* SessionOfGfx(RdpgfxClientContext* gfx) {
  rdpGdi* gdi = gfx ? static_cast<rdpGdi*>(gfx->custom) : nullptr;
  return gdi && gdi->context ? SessionOf(gdi->context) : nullptr;
}

UINT CbGfxSurfaceCommand(RdpgfxClientContext* gfx, const RDPGFX_SURFACE_COMMAND* cmd) {
  Session* s = SessionOfGfx(gfx);
  if (!s || !s->gdiSurfaceCommand) return ERROR_INTERNAL_ERROR;
  if (cmd && cmd->codecId < 16) s->stats.gfxCommands[cmd->codecId]++;
  return s->gdiSurfaceCommand(gfx, cmd);
}

UINT CbGfxEndFrame(RdpgfxClientContext* gfx, const RDPGFX_END_FRAME_PDU* endFrame) {
  Session* s = SessionOfGfx(gfx);
  if (!s || !s->gdiEndFrame) return ERROR_INTERNAL_ERROR;
  s->stats.gfxFrames++;
  return s->gdiEndFrame(gfx, endFrame);
}

void OnChannelConnected(void* context, WR_EVT_CONST ChannelConnectedEventArgs* e) {
  rdpContext* ctx = static_cast<rdpContext*>(context);
  if (!e || !e->name || strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) != 0 || !ctx->gdi) return;
  auto* gfx = static_cast<RdpgfxClientContext*>(e->pInterface);
  if (!gdi_graphics_pipeline_init(ctx->gdi, gfx)) return;
  Session* s = SessionOf(ctx);
  s->gdiSurfaceCommand = gfx->SurfaceCommand;
  s->gdiEndFrame = gfx->EndFrame;
  gfx->SurfaceCommand = CbGfxSurfaceCommand;
  gfx->EndFrame = CbGfxEndFrame;
  s->stats.gfxActive = true;
}

void OnChannelDisconnected(void* context, WR_EVT_CONST ChannelDisconnectedEventArgs* e) {
  rdpContext* ctx = static_cast<rdpContext*>(context);
  if (!e || !e->name || strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) != 0 || !ctx->gdi) return;
  SessionOf(ctx)->stats.gfxActive = false;
  gdi_graphics_pipeline_uninit(ctx->gdi, static_cast<RdpgfxClientContext*>(e->pInterface));
}

// Whether this FreeRDP can decode H.264 (it needs FFmpeg or OpenH264 at build and run time).
// Advertising AVC without a decoder would make a server send frames nobody can show.
bool H264Decodable() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    H264_CONTEXT* h = h264_context_new(FALSE);
    ok = h != nullptr;
    if (h) h264_context_free(h);
  });
  return ok;
}

// Only the channels the settings ask for: drdynvc + rdpgfx when gfx is on. Clipboard,
// audio and drive redirection are switched off in ApplySettings.
BOOL LoadChannels(freerdp* instance) {
  rdpContext* ctx = instance->context;
  if (!freerdp_settings_get_bool(ctx->settings, FreeRDP_SupportGraphicsPipeline)) return TRUE;
  return freerdp_client_load_addins(ctx->channels, ctx->settings);
}

BOOL CbPreConnect(freerdp* instance) {
  rdpContext* ctx = instance->context;
  PubSub_SubscribeChannelConnected(ctx->pubSub, OnChannelConnected);
  PubSub_SubscribeChannelDisconnected(ctx->pubSub, OnChannelDisconnected);
#if WR_FRDP3
  return TRUE;  // FreeRDP 3 calls instance->LoadChannels itself
#else
  return LoadChannels(instance);  // and no keyboard probing of the local X server
#endif
}

BOOL CbPostConnect(freerdp* instance) {
  if (!gdi_init(instance, PIXEL_FORMAT_BGRX32)) return FALSE;  // see BgrxToRgba
  rdpContext* ctx = instance->context;
  ctx->update->BeginPaint = CbBeginPaint;
  ctx->update->EndPaint = CbEndPaint;
  ctx->update->DesktopResize = CbDesktopResize;
  Session* s = SessionOf(ctx);
  {
    std::lock_guard<std::mutex> lk(s->mu);
    s->unicodeInput = freerdp_settings_get_bool(ctx->settings, FreeRDP_UnicodeInput) ? true : false;
  }
  ResetBackBuffer(s, ctx->gdi);
  return TRUE;
}

void CbPostDisconnect(freerdp* instance) {
  if (instance && instance->context && instance->context->gdi) gdi_free(instance);
}

#if WR_FRDP3
BOOL CbLoadChannels(freerdp* instance) { return LoadChannels(instance); }
#endif

BOOL CbClientNew(freerdp* instance, rdpContext* context) {
  instance->PreConnect = CbPreConnect;
  instance->PostConnect = CbPostConnect;
  instance->PostDisconnect = CbPostDisconnect;
  instance->VerifyCertificateEx = CbVerifyCertificateEx;
  instance->VerifyChangedCertificateEx = CbVerifyChangedCertificateEx;
  instance->LogonErrorInfo = CbLogonErrorInfo;
#if WR_FRDP3
  instance->Authenticate = nullptr;
  instance->AuthenticateEx = CbAuthenticateEx;
  instance->GatewayAuthenticate = nullptr;
  instance->LoadChannels = CbLoadChannels;
  // FreeRDP 3's client defaults prompt on stdin; we have no terminal to ask on.
  instance->ChooseSmartcard = nullptr;
  instance->PresentGatewayMessage = nullptr;
#else
  instance->Authenticate = CbAuthenticate;
  instance->GatewayAuthenticate = CbAuthenticate;
#endif
  return TRUE;
}

void CbClientFree(freerdp* instance, rdpContext* context) {}

// ---------------------------------------------------------------------------
// Session thread.

bool Session::ApplySettings(rdpContext* ctx) {
  rdpSettings* st = ctx->settings;
  bool ok = true;
  ok &= !!freerdp_settings_set_string(st, FreeRDP_ServerHostname, opts.host.c_str());
  ok &= !!freerdp_settings_set_uint32(st, FreeRDP_ServerPort, opts.port);
  if (opts.hasUser) ok &= !!freerdp_settings_set_string(st, FreeRDP_Username, opts.username.c_str());
  if (opts.hasPassword) ok &= !!freerdp_settings_set_string(st, FreeRDP_Password, opts.password.c_str());
  if (opts.hasDomain) ok &= !!freerdp_settings_set_string(st, FreeRDP_Domain, opts.domain.c_str());
  ok &= !!freerdp_settings_set_uint32(st, FreeRDP_DesktopWidth, opts.width);
  ok &= !!freerdp_settings_set_uint32(st, FreeRDP_DesktopHeight, opts.height);
  ok &= !!freerdp_settings_set_uint32(st, FreeRDP_ColorDepth, 32);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_SoftwareGdi, TRUE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_SupportGraphicsPipeline, opts.gfx ? TRUE : FALSE);
  // AVC444 (full chroma, two H.264 streams; FreeRDP's 1.0+ capability sets) and AVC420
  // (the 8.1 set): what mstsc and xfreerdp /gfx:AVC444 offer. Off: the server picks a
  // non-H.264 pipeline codec, or, like FreeRDP 2's shadow server, the legacy bitmap path.
  const bool avc = opts.gfx && opts.h264 && H264Decodable();
  stats.h264Offered = avc;
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_GfxH264, avc ? TRUE : FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_GfxAVC444, avc ? TRUE : FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_GfxAVC444v2, avc ? TRUE : FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_RedirectClipboard, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_AudioPlayback, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_AudioCapture, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_RemoteConsoleAudio, TRUE);  // sound stays on the server
  // FreeRDP's addin loader turns these RDP8 extras into rdpdr + a fake rdpsnd; we need neither.
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_SupportHeartbeatPdu, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_SupportMultitransport, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_NetworkAutoDetect, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_DeviceRedirection, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_AutoReconnectionEnabled, FALSE);
  ok &= !!freerdp_settings_set_uint32(st, FreeRDP_KeyboardLayout, 0x409);
  ok &= !!freerdp_settings_set_uint32(st, FreeRDP_TcpConnectTimeout, opts.timeoutMs);
  // Our own trust decision only; FreeRDP must neither prompt nor auto-accept.
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_IgnoreCertificate, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_AutoAcceptCertificate, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_AutoDenyCertificate, FALSE);
  ok &= !!freerdp_settings_set_bool(st, FreeRDP_ExternalCertificateManagement, FALSE);
  if (!opts.configDir.empty())  // keeps FreeRDP's known_hosts away from the user's ~/.config/freerdp
    ok &= !!freerdp_settings_set_string(st, FreeRDP_ConfigPath, opts.configDir.c_str());
  const std::string& sec = opts.security;
  if (sec != "auto") {
    ok &= !!freerdp_settings_set_bool(st, FreeRDP_NlaSecurity, sec == "nla");
    ok &= !!freerdp_settings_set_bool(st, FreeRDP_TlsSecurity, sec == "tls");
    ok &= !!freerdp_settings_set_bool(st, FreeRDP_RdpSecurity, sec == "rdp");
    ok &= !!freerdp_settings_set_bool(st, FreeRDP_ExtSecurity, FALSE);
    if (sec == "rdp") ok &= !!freerdp_settings_set_bool(st, FreeRDP_UseRdpSecurityLayer, TRUE);
  }
  return ok;
}

void Session::DrainInput(rdpContext* ctx) {
  std::deque<InputEv> batch;
  {
    std::lock_guard<std::mutex> lk(mu);
    batch.swap(inputs);
  }
  rdpInput* in = ctx->input;
  auto key = [&](uint32_t sc, bool down) {
    const bool ext = (sc & 0xFF00) == 0xE000 || (sc & 0x100);
#if WR_FRDP3
    freerdp_input_send_keyboard_event_ex(in, down ? TRUE : FALSE, FALSE, MAKE_RDP_SCANCODE(sc & 0xFF, ext));
#else
    freerdp_input_send_keyboard_event_ex(in, down ? TRUE : FALSE, MAKE_RDP_SCANCODE(sc & 0xFF, ext));
#endif
  };
  for (const auto& ev : batch) {
    switch (ev.kind) {
      case InputKind::Key:
        key(ev.code, ev.down);
        break;
      case InputKind::Unicode:
        freerdp_input_send_unicode_keyboard_event(in, ev.down ? 0 : KBD_FLAGS_RELEASE, (UINT16)ev.code);
        break;
      case InputKind::Mouse:
        freerdp_input_send_mouse_event(in, (UINT16)ev.code, ev.x, ev.y);
        break;
      case InputKind::ExtMouse:
        freerdp_input_send_extended_mouse_event(in, (UINT16)ev.code, ev.x, ev.y);
        break;
      case InputKind::CtrlAltDel:
        key(0x1D, true);
        key(0x38, true);
        key(0xE053, true);
        key(0xE053, false);
        key(0x38, false);
        key(0x1D, false);
        break;
    }
  }
}

bool IsNla(rdpContext* ctx, const Options& o) {
  if (o.security == "nla") return true;
  if (o.security != "auto") return false;
  UINT32 sel = freerdp_settings_get_uint32(ctx->settings, FreeRDP_SelectedProtocol);
  return (sel & (0x2u /* PROTOCOL_HYBRID */ | 0x8u /* PROTOCOL_HYBRID_EX */)) != 0;
}

ErrInfo Session::MapConnectError(rdpContext* ctx) {
  if (certRejected) return certErr;
  ErrInfo e;
  const UINT32 err = freerdp_get_last_error(ctx);
  const char* name = freerdp_get_last_error_name(err);
  e.freerdpError = name ? name : "";
  const std::string where = opts.host + ":" + std::to_string(opts.port);
  if (stopRequested) {
    e.code = "ECANCELED";
    e.message = "Connecting was cancelled.";
    return e;
  }
  switch (err) {
    case FREERDP_ERROR_AUTHENTICATION_FAILED:
    case FREERDP_ERROR_CONNECT_LOGON_FAILURE:
    case FREERDP_ERROR_CONNECT_WRONG_PASSWORD:
    case FREERDP_ERROR_CONNECT_NO_OR_MISSING_CREDENTIALS:
    case FREERDP_ERROR_CONNECT_ACCESS_DENIED:
      e.code = "EAUTH";
      e.message = HaveCredentials(this) ? "Authentication failed: wrong user name or password."
                                        : "The server requires a user name and password.";
      return e;
    case FREERDP_ERROR_CONNECT_ACCOUNT_DISABLED:
    case FREERDP_ERROR_CONNECT_ACCOUNT_LOCKED_OUT:
    case FREERDP_ERROR_CONNECT_ACCOUNT_EXPIRED:
    case FREERDP_ERROR_CONNECT_ACCOUNT_RESTRICTION:
    case FREERDP_ERROR_CONNECT_PASSWORD_EXPIRED:
    case FREERDP_ERROR_CONNECT_PASSWORD_MUST_CHANGE:
    case FREERDP_ERROR_CONNECT_PASSWORD_CERTAINLY_EXPIRED:
    case FREERDP_ERROR_CONNECT_LOGON_TYPE_NOT_GRANTED:
    case FREERDP_ERROR_INSUFFICIENT_PRIVILEGES:
    case FREERDP_ERROR_CONNECT_CLIENT_REVOKED:
      e.code = "EAUTH";
      e.message = std::string("The server refused the account: ") +
                  (freerdp_get_last_error_string(err) ? freerdp_get_last_error_string(err) : "logon denied") + ".";
      return e;
    case FREERDP_ERROR_DNS_ERROR:
    case FREERDP_ERROR_DNS_NAME_NOT_FOUND:
      e.code = "EIO";
      e.message = "Host not found: " + opts.host + " does not resolve.";
      return e;
    case FREERDP_ERROR_CONNECT_FAILED:
      e.code = "EIO";
      e.message = "Could not reach " + where + ": connection refused or timed out.";
      return e;
    case FREERDP_ERROR_TLS_CONNECT_FAILED:
      e.code = "ETLS";
      e.message = "TLS handshake with " + where + " failed.";
      return e;
    case FREERDP_ERROR_SECURITY_NEGO_CONNECT_FAILED:
      e.code = "ESECURITY";
      e.message = "The server does not accept the requested security (" + opts.security + ").";
      return e;
    case FREERDP_ERROR_CONNECT_CANCELLED:
      e.code = HaveCredentials(this) ? "ECANCELED" : "EAUTH";
      e.message = HaveCredentials(this) ? "Connecting was cancelled." : "The server requires a user name and password.";
      return e;
    case FREERDP_ERROR_CONNECT_TRANSPORT_FAILED:
      if (!tlsReached) {
        // Never got as far as a certificate: nothing listens there, or it is unreachable.
        e.code = "EIO";
        e.message = "Could not reach " + where + ": connection refused or timed out.";
        return e;
      }
      // With NLA FreeRDP reports a rejected password as a transport failure:
      // the server drops the socket after CredSSP fails.
      if (IsNla(ctx, opts)) {
        e.code = "EAUTH";
        e.message = HaveCredentials(this) ? "Authentication failed: wrong user name or password."
                                          : "The server requires a user name and password.";
      } else {
        e.code = "EIO";
        e.message = "The connection to " + where + " failed during setup.";
      }
      return e;
    default:
      break;
  }
  if (err == FREERDP_ERROR_SUCCESS) {
    e.code = "EIO";
    e.message = "Could not connect to " + where + ".";
    return e;
  }
  const char* str = freerdp_get_last_error_string(err);
  e.code = "EIO";
  e.message = std::string("Could not connect to ") + where + ": " + (str ? str : "unknown error") + ".";
  return e;
}

ErrInfo Session::MapCloseReason(rdpContext* ctx, bool transportError) {
  ErrInfo e;
  if (stopRequested) {
    e.code = "CLOSED";
    e.message = "Session closed.";
    return e;
  }
  const UINT32 info = freerdp_error_info(ctx->instance);
  const UINT32 err = freerdp_get_last_error(ctx);
  const char* name = freerdp_get_last_error_name(err);
  e.freerdpError = name ? name : "";
  std::string logon;
  {
    std::lock_guard<std::mutex> lk(mu);
    logon = logonInfo;
  }
  if (info != 0 && info != 0xFFFFFFFF) {
    const char* s = freerdp_get_error_info_string(info);
    const char* n = freerdp_get_error_info_name(info);
    if (n) e.freerdpError = n;
    // ERRINFO_RPC_INITIATED_LOGOFF (0x2), ERRINFO_LOGOFF_BY_USER (0xC)
    e.code = (info == 0x2 || info == 0xC) ? "ELOGOFF" : "EDISCONNECTED";
    e.message = std::string("The server ended the session: ") + (s ? s : "unknown reason");
    if (!logon.empty()) e.message += " (" + logon + ")";
    return e;
  }
  if (transportError) {
    e.code = "ECONNRESET";
    e.message = "The connection to the server was lost.";
  } else {
    e.code = "EDISCONNECTED";
    e.message = "The server closed the session.";
  }
  if (!logon.empty()) e.message += " (" + logon + ")";
  return e;
}

void Session::Run() {
  RDP_CLIENT_ENTRY_POINTS ep;
  memset(&ep, 0, sizeof(ep));
  ep.Size = sizeof(RDP_CLIENT_ENTRY_POINTS);
  ep.Version = RDP_CLIENT_INTERFACE_VERSION;
  ep.ContextSize = sizeof(WraithContext);
  ep.ClientNew = CbClientNew;
  ep.ClientFree = CbClientFree;

  rdpContext* ctx = freerdp_client_context_new(&ep);
  bool connected = false;
  ErrInfo failure;
  if (!ctx) {
    failure.code = "EIO";
    failure.message = "FreeRDP could not create a client context.";
  } else {
    reinterpret_cast<WraithContext*>(ctx)->session = this;
    if (!ApplySettings(ctx)) {
      failure.code = "EINVAL";
      failure.message = "FreeRDP rejected the connection settings.";
    } else {
      {
        std::lock_guard<std::mutex> lk(mu);
        instance = ctx->instance;
      }
      if (stopRequested) {
        failure.code = "ECANCELED";
        failure.message = "Connecting was cancelled.";
      } else if (freerdp_connect(ctx->instance)) {
        connected = true;
      } else {
        failure = MapConnectError(ctx);
      }
    }
  }

  if (connected) {
    {
      std::lock_guard<std::mutex> lk(mu);
      connectDone = true;
      connectOk = true;
      NotifyLocked();
    }
    bool transportError = false;
    while (!stopRequested) {
      HANDLE handles[MAXIMUM_WAIT_OBJECTS];
      DWORD n = 0;
      handles[n++] = inputEvent;
      // FreeRDP's handles include the channels' queue (2.x and 3.x): what the rdpgfx thread
      // writes (frame acknowledgements, caps) is sent by freerdp_check_event_handles below,
      // through freerdp_channels_check_fds, as soon as it is queued.
      DWORD got = freerdp_get_event_handles(ctx, &handles[n], MAXIMUM_WAIT_OBJECTS - n);
      if (got == 0) {
        transportError = true;
        break;
      }
      n += got;
      DWORD st = WaitForMultipleObjects(n, handles, FALSE, 1000);
      if (st == WAIT_FAILED) {
        transportError = true;
        break;
      }
      if (stopRequested) break;
      ResetEvent(inputEvent);  // before draining: a later push sets it again
      if (!freerdp_check_event_handles(ctx)) {
        transportError = true;
        break;
      }
#if WR_FRDP3
      if (freerdp_shall_disconnect_context(ctx)) break;
#else
      if (freerdp_shall_disconnect(ctx->instance)) break;
#endif
      DrainInput(ctx);
    }
    ErrInfo reason = MapCloseReason(ctx, transportError);
    freerdp_disconnect(ctx->instance);
    {
      std::lock_guard<std::mutex> lk(mu);
      instance = nullptr;
    }
    freerdp_client_context_free(ctx);
    std::lock_guard<std::mutex> lk(mu);
    ReleaseFramebufferLocked();
    closeInfo = reason;
    closedDone = true;
    NotifyLocked();  // last touch of this object by the session thread's logic
    return;
  }

  if (ctx) {
    freerdp_disconnect(ctx->instance);  // frees whatever a half-made connection left behind
    {
      std::lock_guard<std::mutex> lk(mu);
      instance = nullptr;
    }
    freerdp_client_context_free(ctx);
  }
  std::lock_guard<std::mutex> lk(mu);
  ReleaseFramebufferLocked();
  connectDone = true;
  connectOk = false;
  connectErr = failure;
  closedDone = true;
  closeInfo = failure;
  NotifyLocked();
}

// ---------------------------------------------------------------------------
// JS wrapper.

std::mutex g_sessionsMu;
std::set<class RdpSessionWrap*> g_sessions;

// A Uint8Array of `len` bytes for the caller to fill, or false when the env refuses.
// Worker termination: Worker::Exit() on the PARENT thread flips the worker env's
// can_call_into_js to false at any moment, even in the middle of a native callback
// that is already running on the worker (a TSFN delivery, a method call). From then on
// napi_create_arraybuffer fails (NAPI_PREAMBLE), and node-addon-api's
// Uint8Array::New hands back an empty array whose Data() is nullptr (with
// NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS; a fatal napi_throw error without it).
// Copying pixels into that was the segfault in "terminating a worker thread with
// live sessions". Every allocation that is written to must therefore be checked.
bool NewBytes(napi_env env, size_t len, napi_value* out, uint8_t** data) {
  napi_value ab;
  void* p = nullptr;
  if (napi_create_arraybuffer(env, len, &p, &ab) != napi_ok || (p == nullptr && len != 0)) return false;
  if (napi_create_typedarray(env, napi_uint8_array, len, ab, 0, out) != napi_ok) return false;
  *data = static_cast<uint8_t*>(p);
  return true;
}

Napi::Error MakeError(Napi::Env env, const ErrInfo& e) {
  Napi::Error err = Napi::Error::New(env, e.message);
  Napi::Object o = err.Value();
  o.Set("code", e.code);
  if (!e.freerdpError.empty()) o.Set("freerdpError", e.freerdpError);
  if (e.cert) {
    o.Set("host", e.host);
    o.Set("port", e.port);
    o.Set("fingerprint", e.fingerprint);
    o.Set("subject", e.subject);
    o.Set("issuer", e.issuer);
    o.Set("commonName", e.commonName);
  }
  return err;
}

class RdpSessionWrap : public Napi::ObjectWrap<RdpSessionWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "RdpSession",
                       {
                           InstanceMethod("connect", &RdpSessionWrap::Connect),
                           InstanceMethod("close", &RdpSessionWrap::Close),
                           InstanceMethod("sendKey", &RdpSessionWrap::SendKey),
                           InstanceMethod("sendUnicode", &RdpSessionWrap::SendUnicode),
                           InstanceMethod("sendMouse", &RdpSessionWrap::SendMouse),
                           InstanceMethod("sendExtendedMouse", &RdpSessionWrap::SendExtendedMouse),
                           InstanceMethod("sendCtrlAltDel", &RdpSessionWrap::SendCtrlAltDel),
                           InstanceMethod("getFramebuffer", &RdpSessionWrap::GetFramebuffer),
                           InstanceMethod("getStats", &RdpSessionWrap::GetStats),
                       });
  }

  RdpSessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RdpSessionWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsObject()) {
      Napi::TypeError::New(env, "RdpSession(options, handlers)").ThrowAsJavaScriptException();
      return;
    }
    session_ = std::make_shared<Session>();
    Options& o = session_->opts;
    Napi::Object opt = info[0].As<Napi::Object>();
    auto str = [&](const char* k, std::string& out, bool* has) {
      Napi::Value v = opt.Get(k);
      if (v.IsString()) {
        out = v.As<Napi::String>().Utf8Value();
        if (has) *has = true;
      }
    };
    auto num = [&](const char* k, uint32_t& out) {
      Napi::Value v = opt.Get(k);
      if (v.IsNumber()) out = v.As<Napi::Number>().Uint32Value();
    };
    str("host", o.host, nullptr);
    num("port", o.port);
    str("username", o.username, &o.hasUser);
    str("password", o.password, &o.hasPassword);
    str("domain", o.domain, &o.hasDomain);
    num("width", o.width);
    num("height", o.height);
    str("security", o.security, nullptr);
    str("trustedFingerprint", o.trustedFingerprint, nullptr);
    str("configDir", o.configDir, nullptr);
    num("timeoutMs", o.timeoutMs);
    Napi::Value gfx = opt.Get("gfx");
    if (gfx.IsBoolean()) o.gfx = gfx.As<Napi::Boolean>().Value();
    Napi::Value h264 = opt.Get("h264");
    if (h264.IsBoolean()) o.h264 = h264.As<Napi::Boolean>().Value();
    Napi::Value ic = opt.Get("ignoreCertificate");
    o.ignoreCertificate = ic.IsBoolean() && ic.As<Napi::Boolean>().Value();
    if (o.host.empty()) {
      Napi::TypeError::New(env, "options.host is required").ThrowAsJavaScriptException();
      return;
    }
    if (o.security != "auto" && o.security != "nla" && o.security != "tls" && o.security != "rdp") {
      Napi::TypeError::New(env, "options.security must be auto, nla, tls or rdp").ThrowAsJavaScriptException();
      return;
    }
    o.width = std::min<uint32_t>(std::max<uint32_t>(o.width, 200), 8192);
    o.height = std::min<uint32_t>(std::max<uint32_t>(o.height, 200), 8192);
    o.width &= ~1u;  // RDP clients keep even widths
    handlers_ = Napi::Persistent(info[1].As<Napi::Object>());
  }

  ~RdpSessionWrap() override {
    // Only reached once the thread has finished (we hold a Ref while it runs).
    if (thread_.joinable()) thread_.join();
  }

  // Called from the env cleanup hook: the process/worker is going away.
  void Shutdown() {
    if (!running_) return;
    {
      std::lock_guard<std::mutex> lk(session_->mu);
      session_->tsfnUsable = false;
    }
    session_->RequestStop();
    if (thread_.joinable()) thread_.join();
    session_->tsfn.Abort();
    running_ = false;
  }

 private:
  std::shared_ptr<Session> session_;
  Napi::ObjectReference handlers_;
  std::thread thread_;
  bool started_ = false;
  bool running_ = false;
  bool finished_ = false;
  napi_deferred connectDeferred_ = nullptr;

  Napi::Value Connect(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto deferred = Napi::Promise::Deferred::New(env);
    if (started_) {
      ErrInfo e;
      e.code = "EINVAL";
      e.message = "connect() may be called once per session";
      deferred.Reject(MakeError(env, e).Value());
      return deferred.Promise();
    }
    started_ = true;
    // Manual reset: WinPR 2 does not implement auto-reset events.
    session_->inputEvent = CreateEventA(nullptr, TRUE, FALSE, nullptr);
    if (!session_->inputEvent) {
      ErrInfo e;
      e.code = "EIO";
      e.message = "could not create an event";
      deferred.Reject(MakeError(env, e).Value());
      return deferred.Promise();
    }
    // The TSFN carries no data: the session state itself says what happened.
    session_->tsfn = SessionTsfn::New(env, "wraith-rdp-session", 0, 1, this);
    napi_value promise;
    if (napi_create_promise(env, &connectDeferred_, &promise) != napi_ok) {
      Napi::Error::New(env, "could not create a promise").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    Ref();  // keep the wrapper (and its handlers) alive while the thread runs
    running_ = true;
    {
      std::lock_guard<std::mutex> lk(g_sessionsMu);
      g_sessions.insert(this);
    }
    std::shared_ptr<Session> s = session_;
    thread_ = std::thread([s]() { s->Run(); });
    return Napi::Value(env, promise);
  }

 public:
  // Runs on the JS thread when the session thread signalled.
  void Deliver(Napi::Env env) {
    if (finished_) return;
    Session* s = session_.get();
    bool connectNow = false, connectOk = false, resized = false, closed = false, unicodeInput = false;
    bool jsGone = false;  // the env stopped running JS (worker terminating): skip all JS work
    ErrInfo cerr, cinfo;
    uint32_t w = 0, h = 0;
    struct Rect {
      uint32_t x, y, w, h;
      napi_value data;
      uint8_t* dst;
    };
    std::vector<RECTANGLE_16> out;
    std::vector<Rect> rects;
    {
      std::lock_guard<std::mutex> lk(s->mu);
      s->callPending = false;
      if (s->connectDone && !s->connectReported) {
        s->connectReported = true;
        connectNow = true;
        connectOk = s->connectOk;
        cerr = s->connectErr;
      }
      unicodeInput = s->unicodeInput;
      resized = s->resized;
      s->resized = false;
      w = s->fbW;
      h = s->fbH;
      if (s->connectOk && !region16_is_empty(&s->dirty) && w && h) {
        UINT32 nr = 0;
        const RECTANGLE_16* rr = region16_rects(&s->dirty, &nr);
        const RECTANGLE_16* ext = region16_extents(&s->dirty);
        uint64_t area = 0;
        for (UINT32 i = 0; i < nr; i++) area += (uint64_t)(rr[i].right - rr[i].left) * (rr[i].bottom - rr[i].top);
        const uint64_t extArea = (uint64_t)(ext->right - ext->left) * (ext->bottom - ext->top);
        // Coalesce: many small pieces or little wasted area → one bounding box.
        if (nr > 32 || extArea * 2 <= area * 3) out.push_back(*ext);
        else out.assign(rr, rr + nr);
        region16_clear(&s->dirty);
      }
      if (s->closedDone) {
        closed = true;
        cinfo = s->closeInfo;
      }
    }

    // Allocate the JS buffers without holding mu: a large ArrayBuffer can make V8 collect
    // garbage first, and FreeRDP's threads must not wait for that in MirrorRects (with the
    // graphics pipeline the frame acknowledgement waits behind it, and a late acknowledgement
    // makes the server lower its frame rate).
    for (const auto& r : out) {
      const uint32_t rw = r.right - r.left, rh = r.bottom - r.top;
      if (!rw || !rh) continue;
      napi_value buf;
      uint8_t* dst = nullptr;
      if (!NewBytes(env, (size_t)rw * rh * 4, &buf, &dst)) {
        jsGone = true;
        break;
      }
      rects.push_back(Rect{r.left, r.top, rw, rh, buf, dst});
    }
    if (!jsGone && !rects.empty()) {
      std::lock_guard<std::mutex> lk(s->mu);
      if (s->fbW == w && s->fbH == h && !s->back.empty()) {
        // Pixels painted meanwhile are copied too (and marked dirty again, so they come
        // once more with the next call): never older than the region says.
        for (const auto& r : rects)
          for (uint32_t y = 0; y < r.h; y++)
            memcpy(r.dst + (size_t)y * r.w * 4, &s->back[((size_t)(r.y + y) * w + r.x) * 4], (size_t)r.w * 4);
      } else {
        rects.clear();  // resized or closed meanwhile: the next call brings the new frame
      }
    }

    if (jsGone) {
      // Nothing can reach JS any more; EnvCleanup stops the session thread. If the
      // thread already ended, do the native part of the close here (Finish takes this
      // wrapper out of g_sessions, so EnvCleanup will not shut it down a second time).
      if (closed) {
        Finish();
        Unref();
      }
      return;
    }

    Napi::HandleScope scope(env);
    Napi::Object handlers = handlers_.Value();
    // Raw Node-API calls with status checks: while a worker is being terminated JS cannot
    // run, and node-addon-api's throwing wrappers would turn that into a fatal error.
    auto call = [&](const char* name, std::initializer_list<napi_value> args) {
      napi_value fn;
      napi_valuetype t;
      if (napi_get_named_property(env, handlers, name, &fn) != napi_ok) return;
      if (napi_typeof(env, fn, &t) != napi_ok || t != napi_function) return;
      std::vector<napi_value> argv(args);
      napi_value result;
      if (napi_call_function(env, handlers, fn, argv.size(), argv.data(), &result) == napi_pending_exception) {
        // A throwing handler must not take the process down from a native callback.
        napi_value exc;
        if (napi_get_and_clear_last_exception(env, &exc) != napi_ok) return;
        napi_value onErr;
        if (napi_get_named_property(env, handlers, "onHandlerError", &onErr) == napi_ok &&
            napi_typeof(env, onErr, &t) == napi_ok && t == napi_function) {
          if (napi_call_function(env, handlers, onErr, 1, &exc, &result) == napi_pending_exception)
            napi_get_and_clear_last_exception(env, &exc);
        }
      }
    };

    if (connectNow && connectDeferred_) {
      if (connectOk) {
        Napi::Object r = Napi::Object::New(env);
        r.Set("width", w);
        r.Set("height", h);
        r.Set("unicodeInput", unicodeInput);
        napi_resolve_deferred(env, connectDeferred_, r);
      } else {
        napi_reject_deferred(env, connectDeferred_, MakeError(env, cerr).Value());
      }
      connectDeferred_ = nullptr;
    }
    if (connectOk || !connectNow) {
      if (resized && w && h) {
        Napi::Object r = Napi::Object::New(env);
        r.Set("width", w);
        r.Set("height", h);
        call("onResize", {r});
      }
      if (!rects.empty()) {
        Napi::Array arr = Napi::Array::New(env, rects.size());
        for (size_t i = 0; i < rects.size(); i++) {
          Napi::Object o = Napi::Object::New(env);
          o.Set("x", rects[i].x);
          o.Set("y", rects[i].y);
          o.Set("width", rects[i].w);
          o.Set("height", rects[i].h);
          o.Set("data", rects[i].data);
          arr.Set((uint32_t)i, o);
        }
        s->stats.deliveries++;
        call("onFrame", {arr});
      }
    }
    if (closed) {
      Finish();
      // A failed connect is reported through the promise only.
      if (!(connectNow && !connectOk) && s->connectOk) {
        Napi::Object r = Napi::Object::New(env);
        r.Set("code", cinfo.code);
        r.Set("message", cinfo.message);
        if (!cinfo.freerdpError.empty()) r.Set("freerdpError", cinfo.freerdpError);
        call("onClosed", {r});
      }
      Unref();  // may allow GC of this wrapper; do not touch members afterwards
    }
  }

 private:
  void Finish() {
    finished_ = true;
    running_ = false;
    if (thread_.joinable()) thread_.join();  // the thread is at its last lines
    session_->tsfn.Release();
    std::lock_guard<std::mutex> lk(g_sessionsMu);
    g_sessions.erase(this);
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (running_) session_->RequestStop();
    return info.Env().Undefined();
  }

  Napi::Value SendKey(const Napi::CallbackInfo& info) {
    if (info.Length() < 2 || !info[0].IsNumber()) return info.Env().Undefined();
    InputEv ev{InputKind::Key, info[0].As<Napi::Number>().Uint32Value(), info[1].ToBoolean().Value(), 0, 0};
    session_->Push(ev);
    return info.Env().Undefined();
  }

  Napi::Value SendUnicode(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsString()) return info.Env().Undefined();
    std::u16string text = info[0].As<Napi::String>().Utf16Value();
    for (char16_t c : text) {
      session_->Push(InputEv{InputKind::Unicode, (uint32_t)c, true, 0, 0});
      session_->Push(InputEv{InputKind::Unicode, (uint32_t)c, false, 0, 0});
    }
    return info.Env().Undefined();
  }

  static uint16_t Coord(const Napi::Value& v) {
    if (!v.IsNumber()) return 0;
    double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0)) return 0;
    if (d > 65535) return 65535;
    return (uint16_t)d;
  }

  Napi::Value SendMouse(const Napi::CallbackInfo& info) {
    if (info.Length() < 3 || !info[0].IsNumber()) return info.Env().Undefined();
    session_->Push(InputEv{InputKind::Mouse, info[0].As<Napi::Number>().Uint32Value() & 0xFFFF, true,
                           Coord(info[1]), Coord(info[2])});
    return info.Env().Undefined();
  }

  Napi::Value SendExtendedMouse(const Napi::CallbackInfo& info) {
    if (info.Length() < 3 || !info[0].IsNumber()) return info.Env().Undefined();
    session_->Push(InputEv{InputKind::ExtMouse, info[0].As<Napi::Number>().Uint32Value() & 0xFFFF, true,
                           Coord(info[1]), Coord(info[2])});
    return info.Env().Undefined();
  }

  Napi::Value SendCtrlAltDel(const Napi::CallbackInfo& info) {
    session_->Push(InputEv{InputKind::CtrlAltDel, 0, true, 0, 0});
    return info.Env().Undefined();
  }

  // Counters for tests and benchmarks: which path the frames took and how many there were.
  Napi::Value GetStats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Stats& st = session_->stats;
    Napi::Object o = Napi::Object::New(env);
    o.Set("paints", (double)st.paints.load());
    o.Set("deliveries", (double)st.deliveries.load());
    o.Set("graphicsPipeline", st.gfxActive.load());
    o.Set("h264Offered", st.h264Offered.load());
    o.Set("gfxFrames", (double)st.gfxFrames.load());
    static const char* names[16] = {"uncompressed", nullptr, nullptr, "remotefx", nullptr, nullptr, nullptr,
                                    nullptr, "clearcodec", "progressive", "planar", "avc420",
                                    "alpha", "progressive-v2", "avc444", "avc444v2"};
    Napi::Object cmds = Napi::Object::New(env);
    for (int i = 0; i < 16; i++) {
      const uint64_t n = st.gfxCommands[i].load();
      if (n) cmds.Set(names[i] ? names[i] : ("codec-" + std::to_string(i)).c_str(), (double)n);
    }
    o.Set("gfxCommands", cmds);
    return o;
  }

  Napi::Value GetFramebuffer(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Session* s = session_.get();
    std::lock_guard<std::mutex> lk(s->mu);
    if (!s->fbW || !s->fbH || s->back.empty() || !running_) return env.Null();
    // getFramebuffer('rgb') packs 3 bytes a pixel while copying: screenshots feed sharp RGB,
    // because libvips resizes a 4-band image with alpha premultiplication, which cost ~8 ms of a
    // 1920x1080 → 1280x720 screenshot (and dropping alpha in JS costs ~6 ms more).
    const bool rgb = info.Length() > 0 && info[0].IsString() && info[0].As<Napi::String>().Utf8Value() == "rgb";
    const size_t pixels = (size_t)s->fbW * s->fbH;
    napi_value buf;
    uint8_t* dst = nullptr;
    if (!NewBytes(env, rgb ? pixels * 3 : s->back.size(), &buf, &dst)) return env.Null();  // worker terminating (see NewBytes)
    if (rgb) {
      const uint8_t* src = s->back.data();
      for (size_t i = 0; i < pixels; i++, src += 4, dst += 3) {
        dst[0] = src[0];
        dst[1] = src[1];
        dst[2] = src[2];
      }
    } else {
      memcpy(dst, s->back.data(), s->back.size());
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("width", s->fbW);
    o.Set("height", s->fbH);
    o.Set("channels", rgb ? 3 : 4);
    o.Set("data", buf);
    return o;
  }
};

// ---------------------------------------------------------------------------
// Module functions.

Napi::Value SetLogHandler(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DWORD level = WLOG_WARN;
  if (info.Length() > 1 && info[1].IsNumber()) level = info[1].As<Napi::Number>().Uint32Value();
  if (level > WLOG_OFF) level = WLOG_OFF;
  std::lock_guard<std::mutex> lk(g_logMu);
  if (g_logActive) {
    g_logTsfn.Release();
    g_logActive = false;
  }
  if (info.Length() > 0 && info[0].IsFunction()) {
    g_logTsfn = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "wraith-rdp-log", 512, 1);
    g_logTsfn.Unref(env);  // logging alone never keeps the process alive
    g_logActive = true;
    g_logEnv = env;
  }
  InstallWlog(g_logActive ? level : WLOG_OFF);
  return env.Undefined();
}

// The env (main thread or a worker) is going away: stop its sessions and its log sink.
void EnvCleanup(void* arg) {
  napi_env env = static_cast<napi_env>(arg);
  {
    std::lock_guard<std::mutex> lk(g_logMu);
    if (g_logActive && g_logEnv == env) {
      g_logActive = false;
      g_logTsfn.Abort();
      InstallWlog(WLOG_OFF);
    }
  }
  std::vector<RdpSessionWrap*> live;
  {
    std::lock_guard<std::mutex> lk(g_sessionsMu);
    for (auto it = g_sessions.begin(); it != g_sessions.end();) {
      if (static_cast<napi_env>((*it)->Env()) == env) {
        live.push_back(*it);
        it = g_sessions.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto* w : live) w->Shutdown();
}

void CallDeliver(Napi::Env env, Napi::Function, RdpSessionWrap* wrap, void*) {
  if (env == nullptr || wrap == nullptr) return;  // env teardown
  wrap->Deliver(env);
}

}  // namespace

Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  InstallWlog(WLOG_OFF);  // silence FreeRDP until someone asks for its log
  napi_add_env_cleanup_hook(env, EnvCleanup, env);
  exports.Set("RdpSession", RdpSessionWrap::Init(env));
  exports.Set("setLogHandler", Napi::Function::New(env, SetLogHandler));
  Napi::Object ver = Napi::Object::New(env);
  ver.Set("major", FREERDP_VERSION_MAJOR);
  ver.Set("minor", FREERDP_VERSION_MINOR);
  ver.Set("revision", FREERDP_VERSION_REVISION);
  ver.Set("full", FREERDP_VERSION_FULL);
  exports.Set("freerdpVersion", ver);
  return exports;
}

NODE_API_MODULE(wraith_rdp, InitModule)
