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

window.addEventListener('beforeunload', () => link.dispose());

// Files dropped where nothing takes them (a toast, a card, the status bar) would be opened by the
// browser in Wraith's place, and every tab with it. The places that take drops (the Files panel,
// a terminal, the tab strip, the tree) accept them on dragover; anywhere else the drop is refused.
window.addEventListener('dragover', (e) => {
  if (e.defaultPrevented) return;
  e.preventDefault();
  if (e.dataTransfer) e.dataTransfer.dropEffect = 'none';
});
window.addEventListener('drop', (e) => e.preventDefault());
