import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { useSettingsStore } from './settings.js';

function clamp(v: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, Math.round(v)));
}

/**
 * The height the session area keeps under the local shell panel, its tab strip (34 px) and a few
 * terminal rows: a panel dragged or saved taller, or a window made smaller, never covers the tabs.
 * theme.css holds the same floor (.sessions-area) for the moment before the window is measured.
 */
export const SESSIONS_MIN_HEIGHT = 120;
/** The local shell panel's height limits (ui.bottomPanelHeight). */
const BOTTOM_MIN = 120;
const BOTTOM_MAX = 1200;

/** Which panels are open and how big; sizes persist in settings (ui.*). */
export const useLayoutStore = defineStore('layout', () => {
  const settings = useSettingsStore();
  const rightOpen = ref(false);
  const bottomOpen = ref(false);
  /** The most the local shell panel can have in this window (setCenterHeight); null until measured. */
  const bottomRoom = ref<number | null>(null);

  const leftWidth = computed(() => settings.values['ui.leftPanelWidth']);
  const rightWidth = computed(() => settings.values['ui.rightPanelWidth']);
  /** The panel's height as the user chose it (kept, so the panel grows back with the window). */
  const bottomHeight = computed(() => settings.values['ui.bottomPanelHeight']);
  /** The panel's height as shown: the chosen one, or less where the window has no room for it. */
  const shownBottomHeight = computed(() => (bottomRoom.value === null ? bottomHeight.value : Math.min(bottomHeight.value, bottomRoom.value)));

  /** The height of the column the session area and the panel share (it changes with the window). */
  function setCenterHeight(px: number): void {
    // The splitter between them takes 1 px.
    bottomRoom.value = Math.max(0, Math.floor(px) - SESSIONS_MIN_HEIGHT - 1);
  }

  function toggleRight(): void {
    rightOpen.value = !rightOpen.value;
  }
  function toggleBottom(): void {
    bottomOpen.value = !bottomOpen.value;
  }

  // Dragging updates the view at once; the host stores the final size when the drag ends.
  function resizeLeft(px: number, commit: boolean): void {
    const v = clamp(px, 160, 800);
    if (commit) void settings.set({ 'ui.leftPanelWidth': v });
    else settings.values['ui.leftPanelWidth'] = v;
  }
  function resizeRight(px: number, commit: boolean): void {
    const v = clamp(px, 240, 1200);
    if (commit) void settings.set({ 'ui.rightPanelWidth': v });
    else settings.values['ui.rightPanelWidth'] = v;
  }
  function resizeBottom(px: number, commit: boolean): void {
    // No taller than the window has room for, or the drag would go on past where the panel stops.
    const v = clamp(px, BOTTOM_MIN, Math.max(BOTTOM_MIN, Math.min(BOTTOM_MAX, bottomRoom.value ?? BOTTOM_MAX)));
    if (commit) void settings.set({ 'ui.bottomPanelHeight': v });
    else settings.values['ui.bottomPanelHeight'] = v;
  }

  return { rightOpen, bottomOpen, leftWidth, rightWidth, bottomHeight, shownBottomHeight, toggleRight, toggleBottom, setCenterHeight, resizeLeft, resizeRight, resizeBottom };
});
