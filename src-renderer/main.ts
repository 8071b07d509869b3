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
