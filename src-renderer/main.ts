import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import './styles/theme.css';
import { terminalInspector } from './features/terminal/terminal-inspect.js';
import { createHostLink, setHostLink, wireFrameCounts } from './transport/index.js';

const link = createHostLink();
setHostLink(link);
window.wraithInspect = { terminals: terminalInspector, transport: { frameCounts: () => ({ ...wireFrameCounts }) } };

const app = createApp(App);
app.use(createPinia());
app.mount('#app');

// The desktop app's port goes with its page. A browser page's socket is left for the browser to
// close as the page goes, which it does with "going away" (1001): the host then knows the page has
// left for good, not dropped, and ends what only it could go on with (the upload it was sending).
// Closed here, it would say "closed normally" (a page may not send 1001 itself), as a reconnect does.
if (link.kind === 'electron') window.addEventListener('beforeunload', () => link.dispose());

// Files dropped where nothing takes them (a toast, a card, the status bar) would be opened by the
// browser in Wraith's place, and every tab with it. The places that take drops (the Files panel,
// a terminal, the tab strip, the tree) accept them on dragover; anywhere else the drop is refused.
window.addEventListener('dragover', (e) => {
  if (e.defaultPrevented) return;
  e.preventDefault();
  if (e.dataTransfer) e.dataTransfer.dropEffect = 'none';
});
window.addEventListener('drop', (e) => e.preventDefault());
