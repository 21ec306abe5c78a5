import { aiTool } from 'ptc-runtime/ai'
void aiTool
